export { contentTypes as lensContentTypes, lensFormats, type LensFormat } from './formats.js'
export { createLensesModule } from './module.js'
export type { Lens, LensVersion } from './schemas.js'
export { createLensesService, LENSES_RESOURCE, type LensesDeps, type LensesService } from './service.js'
export type { Rendered as RenderedLens } from './render.js'
export { createLensFieldReferences } from './field-references.js'
export { lensCreateShape } from './create-shape.js'
/** The create and update bodies as their routes take them (blueprint bricks are parsed by the same schemas). */
export { CreateLensSchema, UpdateLensSchema } from './schemas.js'
