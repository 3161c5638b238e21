import type { Clock } from '../../lib/clock.js'
import type { DatabaseRegistry } from '../../lib/db/index.js'
import type { AppModule } from '../../lib/module.js'
import { createObservers, type Observers } from '../../lib/observers.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import { projectsRoutes } from './routes.js'
import { createProjectsService } from './service.js'

/**
 * Projects: a new one gets its database and its built-in roles. At start the default project is ensured
 * and every project's database prepared (pending project migrations run), so the modules after this one
 * find them ready. `onCreated` tells later modules of a project created while running (automate installs
 * its system flows there); projects that exist at start are theirs to prepare at their own construction.
 */
export async function createProjectsModule(deps: {
  registry: DatabaseRegistry
  clock: Clock
  audit: AuditService
  access: Pick<AccessService, 'seedBuiltInRoles' | 'authorize'>
}) {
  const created = createObservers<[string]>()
  let started = false
  const service = createProjectsService({
    ...deps,
    onCreated: async (id) => {
      await deps.access.seedBuiltInRoles(id)
      if (started) await created.notify(id)
    },
  })
  const defaultProject = await service.ensureDefault()
  for (const project of await service.listAcrossProjects()) await service.prepare(project.id)
  started = true
  return {
    service,
    defaultProject,
    onCreated: created as Observers<[string]>,
    routers: ({ security }) => [projectsRoutes(service, security)],
  } satisfies AppModule
}
