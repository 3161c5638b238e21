import { systemColumns } from '../collections/index.js'

// What the server owns on a record: its system columns (id, times, authors, version, deletion, owner).
const owned = new Set<string>(systemColumns.map((c) => c.name))

/**
 * The body of POST /collections/:name/records that makes this record again: every field the record holds
 * but the system columns, and but the computed fields (lookups and rollups, `computed`), which the server derives.
 */
export function recordCreateShape(
  record: Record<string, unknown>,
  computed: readonly string[] = [],
): Record<string, unknown> {
  const skip = new Set(computed)
  return Object.fromEntries(Object.entries(record).filter(([key]) => !owned.has(key) && !skip.has(key)))
}
