export { createAiService, dayOf, type AiDeps, type AiService } from './service.js'
