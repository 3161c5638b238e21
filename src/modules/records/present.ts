import { alwaysReadable, localise, readValue, type CollectionShape } from './codec.js'
import type { ApiRecord } from './events.js'
import type { Row } from './store.js'

export interface PresentOptions {
  /** A locale, or `*` for every locale of translatable fields. */
  readonly locale: string
  /** The fields asked for (`fields=`); null for all. id, created_at and updated_at always come. */
  readonly projection: ReadonlySet<string> | null
  /** The fields the caller may read; null for all. System columns are always readable. */
  readonly allowlist: readonly string[] | null
}

const alwaysProjected = new Set(['id', 'created_at', 'updated_at'])

/** Whether a field of this name appears in the answer. */
export function shows(name: string, options: PresentOptions): boolean {
  if (options.projection && !options.projection.has(name) && !alwaysProjected.has(name)) return false
  if (options.allowlist && !alwaysReadable.has(name) && !options.allowlist.includes(name)) return false
  return true
}

/**
 * A stored row as the caller sees it: system columns (owned_by once the collection uses owner scoping),
 * stored fields converted back to API values, translatable fields in the locale, only what the caller may
 * read and asked for. Computed fields and expansions are filled in afterwards (expand.ts).
 */
export function present(shape: CollectionShape, row: Row, options: PresentOptions): ApiRecord {
  const out: ApiRecord = {}
  for (const column of [
    'id',
    'created_at',
    'updated_at',
    'created_by',
    'updated_by',
    'deleted_at',
    '_version',
  ] as const) {
    if (shows(column, options)) out[column] = row[column] ?? null
  }
  if (shape.collection.ownerScoped && shows('owned_by', options)) out.owned_by = row.owned_by ?? null
  for (const def of shape.stored) {
    if (!shows(def.name, options)) continue
    const value = readValue(def, row[def.name], shape.kind)
    out[def.name] = def.translatable ? localise(value, options.locale) : value
  }
  return out
}

/** Every stored field of a row in API form (events carry the whole record, whoever wrote it). */
export function fullRecord(shape: CollectionShape, row: Row): ApiRecord {
  return present(shape, row, { locale: '*', projection: null, allowlist: null })
}
