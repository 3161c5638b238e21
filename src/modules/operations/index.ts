export { operationCatalog } from './catalog/index.js'
export type { AiChatInput, AiChatMessage, AiChatOutput, AiImageInput, AiImageOutput, AiSteps } from './ai-step.js'
export { createOperationsModule, type OperationsModuleDeps } from './module.js'
export type { OperationServices } from './operation-services.js'
export { createOperationRegistry } from './registry.js'
export {
  evaluateRule,
  evaluateRuleTree,
  parseRule,
  ruleOperators,
  templateRoots,
  type RuleIssue,
  type RuleNode,
  type RuleOperator,
} from './rules.js'
export { evaluateExpression, expressionTimeoutMs } from './expressions.js'
export { AllowedHostSchema, scriptContext } from './catalog/run-script.js'
export {
  executeScript,
  hostAllowed,
  scriptLimits,
  type RunnableScript,
  type ScriptHost,
  type ScriptRunInput,
  type ScriptRunOutput,
} from './scripts.js'
export {
  createOperationsService,
  type CatalogEntry,
  type OperationDescription,
  type OperationsService,
} from './service.js'
export type { FormField } from './describe.js'
export {
  defineOperation,
  StepError,
  StopRun,
  type OperationCategory,
  type OperationContext,
  type OperationDefinition,
  type OperationEffects,
  type OperationNeed,
  type OperationRegistry,
  type CheckStepsOptions,
  type PreparedConfig,
  type StepLogLine,
  type StepNeed,
  type StepNode,
} from './types.js'
export { retryableStatus, stepErrorFrom, throughService } from './service-call.js'
