export type { ChangeRequest, FieldChange } from './define-change.js'
export { fieldRows, type FieldRows } from './field-rows.js'
export { planChanges, type ChangePlan } from './plan-changes.js'
export { changeKinds } from './registry.js'
