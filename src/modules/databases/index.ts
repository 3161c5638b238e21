export { databasesRoutes } from './routes.js'
export {
  createDatabasesService,
  type DatabaseBinding,
  type DatabaseDeletion,
  type DatabasesService,
} from './service.js'
export { createDatabasesModule } from './module.js'
export { createBindingResolver } from './resolve.js'
export { bindingsBox } from './resolve.js'
