import type { ChangeKind } from './define-change.js'
import { enumValuesChange } from './enum-values.js'
import { indexedChange, labelChange, structureChange } from './metadata.js'
import { defaultValueChange, requiredChange } from './required.js'

/** Every kind of change a PATCH may make to an existing field, in the order they are applied. */
export const changeKinds: readonly ChangeKind[] = Object.freeze([
  indexedChange,
  structureChange,
  labelChange,
  enumValuesChange,
  defaultValueChange,
  // After enum values: a value filled in is one of the new ones.
  requiredChange,
])
