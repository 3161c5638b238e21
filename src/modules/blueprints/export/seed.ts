import { AppError } from '../../../lib/errors.js'
import { fieldTypeOf, type FieldTypeName } from '../../collections/index.js'
import { defaultKeyColumns, maxSeedRows } from '../kinds/records.js'
import type { LiveResource } from '../providers/index.js'

type Row = Record<string, unknown>

/**
 * A records brick's body from a collection's records (their create shapes): every stored column the caller
 * reads (computed lookups and rollups are the server's), the same columns in every row, found again by a
 * natural key (`key`, else slug, name or title) that every row holds once, rows ordered by it so that an
 * export of the same records is the same text. Null when there is nothing to seed. Throws invalid_request
 * naming the collection: more than 200 records, no usable key.
 */
export function seedShape(
  collection: LiveResource,
  records: readonly LiveResource[],
  key: string | null,
): Record<string, unknown> | null {
  const name = collection.ref
  const refuse = (message: string) => new AppError('invalid_request', message, { param: 'records', collection: name })
  if (records.length > maxSeedRows)
    throw refuse(`${name} has more than ${maxSeedRows} records: a records brick seeds at most ${maxSeedRows}`)
  if (records.length === 0) return null
  const fields = (collection.shape.fields ?? []) as { name: string; type: string }[]
  const seen = new Set(records.flatMap((r) => Object.keys(r.shape)))
  const columns = fields
    .filter((f) => fieldTypeOf(f.type as FieldTypeName)?.computed !== true && seen.has(f.name))
    .map((f) => f.name)
  const column = key ?? defaultKeyColumns.find((c) => columns.includes(c))
  if (column === undefined)
    throw refuse(
      `${name} has no ${defaultKeyColumns.join(', ')} column you can read: name its natural key as records=${name}:<column>`,
    )
  if (!columns.includes(column)) throw refuse(`${name} has no column ${column} you can read`)
  const keys = new Set<string>()
  for (const record of records) {
    const value = record.shape[column]
    if ((typeof value !== 'string' || value === '') && typeof value !== 'number')
      throw refuse(`A record of ${name} has no ${column}: every seeded row is found again by it (name another key)`)
    const text = JSON.stringify(value)
    if (keys.has(text)) throw refuse(`Two records of ${name} share the ${column} ${text} (name another key)`)
    keys.add(text)
  }
  const ordered = [column, ...columns.filter((c) => c !== column)]
  const rows: Row[] = records.map((r) => Object.fromEntries(ordered.map((c) => [c, r.shape[c] ?? null])))
  rows.sort((a, b) => compareKeys(a[column], b[column]))
  return { collection: name, key: column, rows }
}

function compareKeys(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b
  const x = String(a)
  const y = String(b)
  return x < y ? -1 : x > y ? 1 : 0
}
