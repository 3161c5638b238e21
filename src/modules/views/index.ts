export { createViewsModule, type ViewsModuleDeps } from './module.js'
export type { View } from './schemas.js'
export { createViewsService, VIEWS_RESOURCE, type ViewEvents, type ViewsDeps, type ViewsService } from './service.js'
export { createViewFieldReferences } from './field-references.js'
export { viewCreateShape } from './create-shape.js'
/** The create and update bodies as their routes take them (blueprint bricks are parsed by the same schemas). */
export { CreateViewSchema, UpdateViewSchema } from './schemas.js'
