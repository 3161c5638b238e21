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
