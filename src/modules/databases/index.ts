export { databasesRoutes } from './routes.js'
export { createDatabasesService, type DatabaseBinding, type DatabaseDeletion, type DatabasesService } from './service.js'
