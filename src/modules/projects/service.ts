import type { Clock } from '../../lib/clock.js'
import type { DatabaseRegistry } from '../../lib/db/index.js'
import { AppError, isAppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import { createProjectsStore, type Project } from './store.js'

export interface ProjectsDeps {
  registry: DatabaseRegistry
  clock: Clock
  /** Prepares a new project beyond its database (its built-in roles). */
  onCreated?: (projectId: string) => Promise<void>
  audit?: AuditService
  /** The access module's check, which listing and creating projects go through (`instance/projects:…`). */
  access: Pick<AccessService, 'authorize'>
}

/** Projects: the default one made on first start, more created by a super_admin. */
export function createProjectsService({ registry, clock, onCreated, audit, access }: ProjectsDeps) {
  const store = createProjectsStore(registry.system.db)

  async function create(name: string, isDefault: boolean): Promise<Project> {
    const now = clock.seconds()
    const project: Project = { id: newId(), name, isDefault, createdAt: now, updatedAt: now }
    await store.insert(project)
    await registry.get(project.id) // provisions its database (SQLite file or PostgreSQL schema)
    await onCreated?.(project.id)
    return project
  }

  return {
    /** Returns the default project, creating it (and its database) on a fresh install. */
    async ensureDefault(): Promise<Project> {
      const existing = await store.findDefault()
      if (existing) {
        await registry.get(existing.id)
        return existing
      }
      try {
        return await create('Default project', true)
      } catch (err) {
        // Another instance created it first: the partial unique index refused ours.
        if (isAppError(err) && err.code === 'already_exists') {
          const winner = await store.findDefault()
          if (winner) return winner
        }
        throw err
      }
    },

    /** Creates a project and its database (a super_admin: instance/projects:create). Throws unauthorized, forbidden, invalid_request for an empty name. */
    async create(actor: Principal, name: string): Promise<Project> {
      await access.authorize(actor, 'instance/projects:create')
      const trimmed = name.trim()
      if (trimmed === '' || trimmed.length > 200) throw new AppError('invalid_request', 'name must be 1-200 characters')
      const project = await create(trimmed, false)
      await audit?.record({
        projectId: actor.homeProjectId,
        action: 'project.created',
        actor,
        target: { type: 'project', id: project.id },
        details: { name: trimmed },
      })
      return project
    },

    /** Runs the creation hook on a project again (idempotent): existing projects after an upgrade. */
    async prepare(id: string): Promise<void> {
      await onCreated?.(id)
    },

    /** Every project, the default one first, then oldest first (a super_admin: instance/projects:read). Throws unauthorized, forbidden. */
    async list(actor: Principal): Promise<Project[]> {
      await access.authorize(actor, 'instance/projects:read')
      return store.list()
    },

    /** Every project, for start-up work across projects (preparing each one); not a caller's operation. */
    listAcrossProjects: (): Promise<Project[]> => store.list(),

    /** One project. Throws not_found. */
    async get(id: string): Promise<Project> {
      const project = await store.findById(id)
      if (!project) throw new AppError('not_found', 'Project not found')
      return project
    },
  }
}

export type ProjectsService = ReturnType<typeof createProjectsService>
