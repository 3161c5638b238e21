export { getObjectRoute, putObjectRoute, storageObjectRoutes } from './routes.js'
export { createStorageObjectsModule } from './module.js'
