export { getObjectRoute, putObjectRoute, storageObjectRoutes } from './routes.js'
