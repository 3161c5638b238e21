/** The structure of json fields (addendum §4): grammar, checking, paths, suggestions. */
export {
  enforcements,
  ownEntry,
  parseStructure,
  shapeWidens,
  structureLimits,
  withoutLabels,
  type DefinitionPath,
  type EnumShape,
  type EnumValue,
  type Enforcement,
  type Label,
  type ListShape,
  type MapShape,
  type ObjectShape,
  type ScalarShape,
  type Shape,
  type Structure,
  type StructureParse,
} from './structure-shape.js'
export {
  allowedValues,
  describeIssue,
  expectedOf,
  firstIssue,
  kindOf,
  labelIn,
  renderPath,
  shapeLocations,
  visitIssues,
  type IssueCode,
  type Segment,
  type ShapeLocation,
  type StructureIssue,
} from './structure-check.js'
export { editDistance, suggest } from './structure-suggest.js'

import type { FieldDef } from './field-def.js'
import type { Structure } from './structure-shape.js'

/** The (normalised) structure of a json field, or null. */
export function structureOf(def: FieldDef): Structure | null {
  return def.type === 'json' && def.structure !== undefined && def.structure !== null
    ? (def.structure as Structure)
    : null
}
