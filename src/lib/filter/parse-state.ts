import { filterError } from './filter-error.js'
import { filterLimits } from './limits.js'

/** What one parse has used so far; created per call, never shared. */
export interface ParseState {
  conditions: number
}

/** Counts one comparison against the limit; throws invalid_request past it. */
export function countCondition(state: ParseState, at: string): void {
  state.conditions += 1
  if (state.conditions > filterLimits.maxConditions) {
    throw filterError(at, `filter has more than ${filterLimits.maxConditions} conditions`)
  }
}
