export { apiKeysRoutes } from './routes.js'
export { createApiKeysService, type ApiKey, type ApiKeysService, type ResolvedKey } from './service.js'
export { createApiKeysModule } from './module.js'
