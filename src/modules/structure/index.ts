export { structureRoutes } from './routes.js'
export { createStructureService, type StructureDeps, type StructureService } from './service.js'
export { createStructureModule } from './module.js'
