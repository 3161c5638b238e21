import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import { resourcePublisher, type EventBus, type ResourceEvents } from '../../lib/events/index.js'
import { AppError, isAppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import type { StorageConnectionsService } from '../storage-connections/index.js'
import { checkDefinition } from './rules.js'
import type { Container, ContainerDefinition, CreateContainerInput, UpdateContainerInput } from './schemas.js'
import { createContainersStore, type ContainerChanges, type ContainerRow } from './store.js'

export interface ContainersDeps {
  systemDb: Kysely<any>
  clock: Clock
  access: Pick<AccessService, 'authorize'>
  audit: Pick<AuditService, 'record'>
  /** A named connection is looked up as the caller: another project's is not found, so refused (422). */
  storageConnections: Pick<StorageConnectionsService, 'get'>
  /** container.create, container.update, container.delete (docs/events.md). */
  events: EventBus<ContainerEvents>
}

export type ContainerEvents = ResourceEvents<'container', Container>

/** How many files of the project were uploaded into a container (the files module answers, registered at its construction). */
export type ContainerUsage = (projectId: string, containerId: string) => Promise<number>

export const CONTAINERS_RESOURCE = 'system/containers'
const notFound = () => new AppError('not_found', 'Container not found')

/**
 * File containers (docs/containers.md, decision 066): CRUD under system/containers, and `rulesOf`, the
 * files module's unchecked read of a container's rules at upload (the uploader's own check is system/files:create).
 */
export function createContainersService(deps: ContainersDeps) {
  const store = createContainersStore(deps.systemDb)
  const usage: ContainerUsage[] = []
  const may = (actor: Principal, action: 'read' | 'create' | 'update' | 'delete') =>
    deps.access.authorize(actor, `${CONTAINERS_RESOURCE}:${action}`)
  const publish = resourcePublisher(deps.events, 'container', deps.clock)

  async function rowOf(projectId: string, id: string): Promise<ContainerRow> {
    const row = await store.byId(projectId, id)
    if (!row) throw notFound()
    return row
  }

  /** The definition's rules (422), then its storage connection as the caller: not found (another project's too) is 422. */
  async function check(actor: Principal, definition: ContainerDefinition): Promise<void> {
    checkDefinition(definition)
    if (definition.storageConnectionId === null) return
    try {
      await deps.storageConnections.get(actor, definition.storageConnectionId)
    } catch (err) {
      if (isAppError(err) && err.code === 'not_found')
        throw new AppError(
          'validation_error',
          'storageConnectionId: no storage connection of this project has this id',
          {
            at: 'storageConnectionId',
          },
        )
      throw err
    }
  }

  async function audit(
    actor: Principal,
    action: 'created' | 'updated' | 'deleted',
    row: ContainerRow,
    details: Record<string, unknown>,
  ) {
    await deps.audit.record({
      projectId: actor.projectId,
      action: `container.${action}`,
      actor,
      target: { type: 'container', id: row.id },
      details: { name: row.name, ...details },
    })
  }

  return {
    /** A page of the project's containers, by name. Throws unauthorized, forbidden (system/containers:read). */
    async list(actor: Principal, page: number, limit: number): Promise<{ data: Container[]; total: number }> {
      await may(actor, 'read')
      const { rows, total } = await store.list(actor.projectId, page, limit)
      return { data: rows.map(toContainer), total }
    },

    /** One container. Throws forbidden, not_found (also another project's). */
    async get(actor: Principal, id: string): Promise<Container> {
      await may(actor, 'read')
      return toContainer(await rowOf(actor.projectId, id))
    },

    /** Saves a container. Throws forbidden, validation_error, already_exists (name). */
    async create(actor: Principal, input: CreateContainerInput): Promise<Container> {
      await may(actor, 'create')
      const definition = { ...input, name: input.name.trim() }
      await check(actor, definition)
      const now = deps.clock.seconds()
      const row: ContainerRow = {
        id: newId(),
        project_id: actor.projectId,
        ...columnsOf(definition),
        created_by: actor.userId,
        created_at: now,
        updated_at: now,
      }
      await store.insert(row)
      await audit(actor, 'created', row, {})
      const container = toContainer(row)
      publish(actor, row.id, null, container)
      return container
    },

    /** Changes a container (merged over the stored one and checked whole); files already stored stay where they are. Throws forbidden, not_found, validation_error, already_exists. */
    async update(actor: Principal, id: string, input: UpdateContainerInput): Promise<Container> {
      await may(actor, 'update')
      const row = await rowOf(actor.projectId, id)
      const merged: ContainerDefinition = { ...definitionOf(row) }
      for (const [key, value] of Object.entries(input))
        if (value !== undefined) (merged as unknown as Record<string, unknown>)[key] = value
      merged.name = merged.name.trim()
      await check(actor, merged)
      const changes: ContainerChanges = { ...columnsOf(merged), updated_at: deps.clock.seconds() }
      if (!(await store.update(actor.projectId, id, changes))) throw notFound()
      const after = { ...row, ...changes }
      await audit(actor, 'updated', after, { changed: Object.keys(input) })
      const container = toContainer(after)
      publish(actor, id, toContainer(row), container)
      return container
    },

    /** Deletes a container no file was uploaded into. Throws forbidden, not_found, conflict (files, counted in details). */
    async delete(actor: Principal, id: string): Promise<void> {
      await may(actor, 'delete')
      const row = await rowOf(actor.projectId, id)
      let files = 0
      for (const count of usage) files += await count(actor.projectId, id)
      if (files > 0)
        throw new AppError(
          'conflict',
          `${files} file(s) were uploaded into this container; delete or move them first`,
          {
            files,
          },
        )
      if (!(await store.delete(actor.projectId, id))) throw notFound()
      await audit(actor, 'deleted', row, {})
      publish(actor, id, toContainer(row), null)
    },

    /** A container's rules, unchecked, for the files module at upload and regenerate; undefined when it is not the project's. */
    async rulesOf(projectId: string, id: string): Promise<Container | undefined> {
      const row = await store.byId(projectId, id)
      return row && toContainer(row)
    },

    /** Registers a counter of the files in a container (the files module, at its construction). */
    addUsage(count: ContainerUsage): void {
      usage.push(count)
    },
  }
}

export type ContainersService = ReturnType<typeof createContainersService>

function columnsOf(d: ContainerDefinition) {
  return {
    name: d.name,
    storage_connection_id: d.storageConnectionId,
    bucket_name: d.bucketName,
    prefix: d.prefix,
    visibility: d.visibility,
    image_sizes: JSON.stringify(d.imageSizes.map((s) => ({ name: s.name, size: s.size }))),
    max_file_bytes: d.maxFileBytes,
    allowed_types: JSON.stringify(d.allowedTypes),
  }
}

function definitionOf(row: ContainerRow): ContainerDefinition {
  return {
    name: row.name,
    storageConnectionId: row.storage_connection_id,
    bucketName: row.bucket_name,
    prefix: row.prefix,
    visibility: row.visibility,
    imageSizes: JSON.parse(row.image_sizes) as ContainerDefinition['imageSizes'],
    maxFileBytes: row.max_file_bytes === null ? null : Number(row.max_file_bytes),
    allowedTypes: JSON.parse(row.allowed_types) as string[],
  }
}

function toContainer(row: ContainerRow): Container {
  return {
    id: row.id,
    ...definitionOf(row),
    createdBy: row.created_by,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  }
}
