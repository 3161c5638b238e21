export { createBlueprintsModule } from './module.js'
export { createBlueprintsService, maxDocumentBytes, type BlueprintsService } from './service.js'
export type { ValidateRequest, ValidateResult } from './schemas.js'
export { brickProviders } from './providers/index.js'
