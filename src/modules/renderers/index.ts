export { createRenderersModule, type RenderersModuleDeps } from './module.js'
export type { Renderer, RenderedRecord } from './schemas.js'
export {
  createRenderersService,
  RENDERERS_RESOURCE,
  type RenderersDeps,
  type RenderersService,
  type RendererEvents,
} from './service.js'
export { createRendererFieldReferences } from './field-references.js'
export { rendererCreateShape } from './create-shape.js'
/** The create and update bodies as their routes take them (blueprint bricks are parsed by the same schemas). */
export { CreateRendererSchema, UpdateRendererSchema } from './schemas.js'
