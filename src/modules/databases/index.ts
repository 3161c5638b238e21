export { databasesRoutes } from './routes.js'
export { createDatabasesService, type DatabaseBinding, type DatabasesService } from './service.js'
