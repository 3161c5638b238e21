export { createRenderersModule, type RenderersModuleDeps } from './module.js'
export type { Renderer, RenderedRecord } from './schemas.js'
export { createRenderersService, RENDERERS_RESOURCE, type RenderersDeps, type RenderersService } from './service.js'
