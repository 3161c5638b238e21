import { defineChange } from './define-change.js'

/**
 * A lookup's or rollup's `resultType`: derived by the server from the field it reads, so it follows a type
 * change there (number → integer) the next time this collection is saved. Computed fields have no column
 * and no rows: metadata only.
 */
export const resultTypeChange = defineChange({ kind: 'resultType', properties: ['resultType'] })
