export { createViewsModule, type ViewsModuleDeps } from './module.js'
export type { View } from './schemas.js'
export { createViewsService, VIEWS_RESOURCE, type ViewsDeps, type ViewsService } from './service.js'
export { createViewFieldReferences } from './field-references.js'
