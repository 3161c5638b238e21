import type { AppModule } from '../../lib/module.js'
import { bindingsBox } from './resolve.js'
import { databasesRoutes } from './routes.js'
import { createDatabasesService, type DatabasesDeps } from './service.js'

/** Registered database bindings of a project; the registry's lookup of them is `createBindingResolver` (resolve.ts). */
export function createDatabasesModule(deps: Omit<DatabasesDeps, 'box'> & { secretKey: string }) {
  const { secretKey, ...rest } = deps
  const service = createDatabasesService({ ...rest, box: bindingsBox(secretKey) })
  return { service, routers: ({ security }) => [databasesRoutes(service, security)] } satisfies AppModule
}
