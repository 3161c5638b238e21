import type { AppModule } from '../../lib/module.js'
import type { FieldChangeHooks } from '../collections/index.js'
import { structureRoutes } from './routes.js'
import { createStructureService, type StructureDeps } from './service.js'

/**
 * Field options, structure scans and repairs. It registers at construction with the modules it watches:
 * the collections module's field changes (a switch to strict needs a clean scan; a changed structure
 * supersedes its jobs) and the records write hooks (enforcement warn logs what does not match).
 */
export function createStructureModule(
  deps: StructureDeps & { fieldChanges: { add(hooks: FieldChangeHooks): unknown } },
) {
  const { fieldChanges, ...rest } = deps
  const service = createStructureService(rest)
  fieldChanges.add(service.fieldChanges)
  rest.records.hooks.add(service.warnOnWrite)
  return {
    service,
    routers: ({ security, readSecurity }) => structureRoutes(service, security, readSecurity),
    close: () => service.close(),
  } satisfies AppModule
}
