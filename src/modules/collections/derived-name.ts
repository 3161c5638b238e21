import { createHash } from 'node:crypto'

/** PostgreSQL keeps only the first 63 bytes of an identifier (NAMEDATALEN - 1). */
export const identifierLimit = 63

/**
 * The name of an object derived from a collection (an index): `full` when it fits, else its first 54
 * characters, `_` and 8 hex digits of its hash. PostgreSQL would otherwise cut longer names silently, so
 * two indexes of a table with a long name could end up with the same name (and a 500 ddl_error).
 * Names are ASCII (checked names and fixed suffixes), so characters are bytes.
 */
export function derivedName(full: string): string {
  if (full.length <= identifierLimit) return full
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8)
  return `${full.slice(0, identifierLimit - hash.length - 1)}_${hash}`
}
