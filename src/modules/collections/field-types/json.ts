import { decodeJson } from './decode.js'
import { defineFieldType } from './define-field-type.js'
import { FieldValueError, invalidValue } from './field-value-error.js'
import { jsonProblem } from './json-value.js'
import { describeIssue, firstIssue, renderPath, structureOf, suggest } from './structure.js'
import { parseStructure, type Shape } from './structure-shape.js'
import { jsonColumn } from './text-like.js'

/**
 * Any JSON value; `jsonb` is accepted as an alias. With a `structure` (addendum §4) whose enforcement is
 * `strict`, a value that does not match the shape is refused (422 validation_error naming the path);
 * `warn` and `off` accept it here (warn is reported by the structure module).
 */
export const jsonField = defineFieldType({
  type: 'json',
  label: 'JSON',
  aliases: ['jsonb'],
  options: ['structure'],
  column: (_def, dialect) => jsonColumn(dialect),
  valueKind: () => 'json',
  write(value, def) {
    const problem = jsonProblem(value)
    if (problem) throw invalidValue(def.name, `plain JSON (${problem})`, value)
    const structure = structureOf(def)
    if (structure?.enforcement === 'strict') {
      const mismatch = shapeMismatch(value, structure.shape, def.name)
      if (mismatch) throw mismatch
    }
    return value
  },
  read: (value, _def, dialect) => decodeJson(value, dialect),
  checkDefinition(def) {
    if (def.structure === undefined || def.structure === null) return []
    const parsed = parseStructure(def.structure)
    if (!parsed.ok) return [`structure${parsed.path.map((p) => `.${p}`).join('')}: ${parsed.message}`]
    // A default is written into rows without a check of its own: it must match whatever the enforcement.
    if (def.defaultValue === undefined || def.defaultValue === null) return []
    const mismatch = shapeMismatch(def.defaultValue, parsed.structure.shape, def.name)
    return mismatch ? [`defaultValue does not match the structure: ${mismatch.message}`] : []
  },
})

/** A validation_error naming the path of the first mismatch (with a near miss when there is one), or null. */
function shapeMismatch(value: unknown, shape: Shape, field: string): FieldValueError | null {
  const issue = firstIssue(value, shape)
  if (!issue) return null
  const path = renderPath(issue.path, false)
  let hint = ''
  if (issue.value !== undefined && (issue.code === 'enum' || issue.code === 'key')) {
    const near =
      issue.shape.type === 'enum'
        ? suggest(
            issue.value,
            issue.shape.values.map((v) => v.value),
          )
        : null
    if (near !== null) hint = `; did you mean ${JSON.stringify(near)}?`
  } else if (issue.code === 'unknown-key' && issue.value !== undefined && issue.shape.type === 'object') {
    const near = suggest(issue.value, Object.keys(issue.shape.entries))
    if (near !== null) hint = `; did you mean ${JSON.stringify(near)}?`
  }
  return new FieldValueError(
    'validation_error',
    field,
    `Field "${field}" at ${path}: ${describeIssue(issue)}${hint}`,
    'structure',
  )
}
