export { projectsRoutes } from './routes.js'
export { createProjectsService, type ProjectsService } from './service.js'
export type { Project } from './store.js'
export { createProjectsModule } from './module.js'
