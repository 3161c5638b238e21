export {
  createScriptsService,
  type Script,
  type ScriptsDeps,
  type ScriptsService,
  type ScriptTestResult,
} from './service.js'
export { scriptsRoutes } from './routes.js'
export { ScriptCreateSchema, ScriptPatchSchema } from './schemas.js'
