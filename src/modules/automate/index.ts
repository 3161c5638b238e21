export { createAutomateModule, type AutomateDeps, type AutomateModule, type PlatformServices } from './module.js'
export { MASK, maskCredentials, maskSteps, maskTriggerConfig, restoreMasked } from './flows/masking.js'
export type { FlowsService } from './flows/service.js'
export type { Flow, FlowDetail } from './flows/wire.js'
export {
  defaultLimits,
  quotaExceeded,
  type Limits,
  type QuotasService,
  type Usage,
  type UsageProvider,
} from './quotas/index.js'
export type { RunsService } from './runs/index.js'
export type { Script, ScriptsService, ScriptTestResult } from './scripts/index.js'
export { ScriptCreateSchema, ScriptPatchSchema } from './scripts/index.js'
export {
  filterDataStep,
  maxSubFlowDepth,
  type SubFlowCall,
  type SubFlowResult,
  type Triggers,
} from './triggers/index.js'
export * from './model.js'
export { createFlowFieldReferences } from './flows/field-references.js'
export { flowCreateShape, flowDesiredShape, scriptCreateShape } from './create-shape.js'
export { PatchFlowSchema } from './flows/schemas.js'
