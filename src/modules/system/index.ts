export { systemRoutes } from './routes.js'
export { createSystemService, type SystemFacts, type SystemService } from './service.js'
export { createSystemModule } from './module.js'
