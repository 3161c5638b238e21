import type { ChangeKind } from './define-change.js'
import { enumValuesChange } from './enum-values.js'
import { fieldTypeChange } from './field-type.js'
import { indexedChange, labelChange, structureChange } from './metadata.js'
import { relationConfigChange } from './relation-config.js'
import { defaultValueChange, requiredChange } from './required.js'
import { resultTypeChange } from './result-type.js'
import { uniqueChange } from './unique.js'
import { validationRulesChange } from './validation-rules.js'

/** Every kind of change a PATCH may make to an existing field, in the order they are applied. */
export const changeKinds: readonly ChangeKind[] = Object.freeze([
  indexedChange,
  structureChange,
  labelChange,
  // First of those that touch rows: the others see the values converted (and its 400 comes first).
  fieldTypeChange,
  enumValuesChange,
  validationRulesChange,
  defaultValueChange,
  // After enum values: a value filled in is one of the new ones.
  requiredChange,
  // Last: the values it checks are the ones the changes above leave.
  uniqueChange,
  relationConfigChange,
  resultTypeChange,
])
