import { literal, variable, variableNames, type Operand, type VariableName } from './ast.js'
import { childPath, filterError, quote } from './filter-error.js'
import { filterLimits } from './limits.js'

// Decision: a string that looks exactly like a variable (`$` then UPPER_CASE) and is not one of the spec's
// names is refused, because it is almost surely a typo (`$CURRENT_USR`) that would otherwise compare as a
// literal and silently match nothing, or everything under neq. Anything else with a `$` (`$5`, `$lower`,
// `USD $`, `$NOW ` with a space) is an ordinary literal. The known names are always variables.
const variableShape = /^\$[A-Z][A-Z0-9_]*$/
const knownVariables: ReadonlySet<string> = new Set(variableNames)

/** Reads one filter value: a JSON scalar or a variable; throws invalid_request. */
export function parseOperand(raw: unknown, at: string): Operand {
  switch (typeof raw) {
    case 'string':
      if (raw.length > filterLimits.maxStringLength) {
        throw filterError(at, `string value longer than ${filterLimits.maxStringLength} characters`)
      }
      if (!variableShape.test(raw)) return literal(raw)
      if (!knownVariables.has(raw)) throw filterError(at, `unknown variable ${quote(raw)}`)
      return variable(raw as VariableName)
    case 'number':
      // JSON.parse turns 1e999 into Infinity; a value handed over directly may be NaN.
      if (!Number.isFinite(raw)) throw filterError(at, 'number value must be finite')
      return literal(raw)
    case 'boolean':
      return literal(raw)
    case 'object':
      if (raw === null) return literal(null)
      break
  }
  throw filterError(at, 'value must be a string, number, boolean or null')
}

/** Reads the values of an in/nin list: 1 to 500 scalars or variables; throws invalid_request. */
export function parseOperandList(raw: readonly unknown[], at: string): readonly Operand[] {
  if (raw.length === 0) throw filterError(at, 'list must hold at least one value')
  if (raw.length > filterLimits.maxListValues) {
    throw filterError(at, `list holds more than ${filterLimits.maxListValues} values`)
  }
  // Array.from visits holes of a sparse array (as undefined, refused) where map would skip them.
  return Array.from(raw, (item, index) => parseOperand(item, childPath(at, index)))
}
