import type { FilterCase } from './filter-fixture.js'
import { comparisonCases } from './filter-cases-comparison.js'
import { logicCases } from './filter-cases-logic.js'
import { membershipCases } from './filter-cases-membership.js'
import { pathCases } from './filter-cases-paths.js'
import { textCases } from './filter-cases-text.js'
import { variableCases } from './filter-cases-variables.js'

export {
  filterColumns,
  filterContext,
  filterRecords,
  filterSchema,
  type FilterCase,
} from './filter-fixture.js'

/**
 * The shared conformance table of the filter language: filters (as values; runners also send each through
 * JSON.stringify), fixture records (filter-fixture.ts) and the ids each filter must match, in fixture order.
 * Every filter goes through the schema check (`checkFilter` over `filterSchema`) as a request's does; then
 * the in-memory evaluator and the SQL compiler (against SQLite and PostgreSQL) run the same rows. Only
 * filters whose meaning is the same in memory and in SQL belong here: no type mismatches (the schema check
 * refuses or converts those first), no eq on JSON containers. One file per capability (filter-cases-*.ts).
 */
export const filterCases: readonly FilterCase[] = [
  ...logicCases,
  ...comparisonCases,
  ...membershipCases,
  ...textCases,
  ...pathCases,
  ...variableCases,
]
