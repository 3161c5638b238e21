import type { DbKind } from '../../lib/db/index.js'
import { AppError } from '../../lib/errors.js'
import {
  checkJsonPath,
  type ColumnKind,
  type FieldPath,
  type FieldResolver,
  type ResolvedField,
} from '../../lib/filter/index.js'
import { fieldTypeOf, FieldValueError, systemColumns, type Collection, type FieldDef } from '../collections/index.js'

/** The system columns a client never writes; id, created_at and updated_at only privileged callers may set. */
export const systemColumnNames: readonly string[] = systemColumns.map((c) => c.name)
const systemKinds = new Map(systemColumns.map((c) => [c.name, c.valueKind as ColumnKind]))
/** Always readable, whatever a field allowlist says (addendum §3). */
export const alwaysReadable: ReadonlySet<string> = new Set(systemColumnNames)

/** A collection's fields by name, split into stored and computed. */
export interface CollectionShape {
  readonly collection: Collection
  readonly kind: DbKind
  readonly byName: ReadonlyMap<string, FieldDef>
  readonly stored: readonly FieldDef[]
  readonly computed: readonly FieldDef[]
}

export function shapeOf(collection: Collection, kind: DbKind): CollectionShape {
  const byName = new Map(collection.fields.map((f) => [f.name, f]))
  const stored = collection.fields.filter((f) => !fieldTypeOf(f.type).computed)
  const computed = collection.fields.filter((f) => fieldTypeOf(f.type).computed)
  return { collection, kind, byName, stored, computed }
}

/**
 * Resolves filter and sort paths onto the collection's columns: system columns, stored fields, paths into
 * JSON fields, and translatable fields as their value in `locale`. Anything else is 400 invalid_request;
 * with an allowlist (a request's own filter and sort), a field outside it is 403.
 */
export function fieldResolver(
  shape: CollectionShape,
  locale: string,
  allowlist: readonly string[] | null = null,
): FieldResolver {
  return {
    resolve(path: FieldPath): ResolvedField {
      const [head, ...rest] = path
      const system = systemKinds.get(head)
      if (system) {
        if (rest.length > 0)
          throw new AppError('invalid_request', `${path.join('.')}: ${head} has no sub-fields`, {
            field: path.join('.'),
          })
        return { column: head, jsonPath: [], type: system }
      }
      const def = shape.byName.get(head)
      if (!def)
        throw new AppError('invalid_request', `Unknown field "${path.join('.').slice(0, 100)}"`, {
          field: path.join('.').slice(0, 100),
        })
      // Filtering or sorting on a field would reveal its values to a caller who may not read it.
      if (allowlist && !allowlist.includes(head))
        throw new AppError('forbidden', `You may not filter or sort on ${head}`, { field: head })
      const type = fieldTypeOf(def.type)
      if (type.computed)
        throw new AppError('invalid_request', `${head} is computed and cannot be filtered or sorted on`, {
          field: head,
        })
      if (def.translatable) {
        if (rest.length > 0)
          throw new AppError('invalid_request', `${path.join('.')}: ${head} has no sub-fields`, { field: head })
        checkJsonPath([locale])
        return { column: head, jsonPath: [locale], type: 'json' }
      }
      const kind = type.valueKind(def)
      if (def.type === 'relation' && kind !== 'json' && rest.length > 0) {
        // A records list, find or aggregate follows it (relation-paths.ts); here it cannot be (decision 059).
        throw new AppError(
          'invalid_request',
          `${path.join('.')}: ${head} is a relation; only a records filter follows it (not sortBy, a grant's item_filter or a realtime filter)`,
          { field: path.join('.') },
        )
      }
      if (kind !== 'json' && rest.length > 0) {
        throw new AppError('invalid_request', `${path.join('.')}: ${head} has no sub-fields`, { field: path.join('.') })
      }
      return { column: head, jsonPath: rest, type: kind }
    },
  }
}

/** Whether a stored field holds JSON (serialised on the way in, parsed on the way out). */
export function isJsonField(def: FieldDef): boolean {
  return fieldTypeOf(def.type).valueKind(def) === 'json'
}

/**
 * The most a JSON-valued field (json, geo, multi_enum, translatable text) stores, serialised as UTF-8.
 * A body is bounded by MAX_BODY_BYTES, but `$push` grows a field request by request; without a bound it
 * would grow until a database limit fails the write, and every read and write of the record carries it.
 */
export const jsonValueBytesLimit = 8 * 1024 * 1024

/** Validates one incoming value of a field and returns what the column stores; FieldValueError becomes AppError. */
export function writeValue(def: FieldDef, value: unknown): unknown {
  if (value === null) {
    if (def.required) throw new AppError('missing_field', `Field "${def.name}" is required`, { field: def.name })
    return null
  }
  try {
    const stored = fieldTypeOf(def.type).write(value, def)
    // PostgreSQL text and jsonb cannot hold U+0000 (a database error there); refused on both dialects alike.
    if (holdsNul(stored))
      throw new AppError('invalid_field', `Field "${def.name}" must not contain the character U+0000`, {
        field: def.name,
      })
    if (!isJsonField(def)) return stored
    const text = JSON.stringify(stored)
    if (text.length > jsonValueBytesLimit / 3 && Buffer.byteLength(text) > jsonValueBytesLimit) {
      throw new AppError(
        'invalid_field',
        `Field "${def.name}" would hold more than ${jsonValueBytesLimit / 1_048_576} MiB of JSON (${jsonValueBytesLimit} bytes)`,
        { field: def.name, limit: jsonValueBytesLimit },
      )
    }
    return text
  } catch (err) {
    // The type's details (the rule broken, a structure path) stay; the field is named as the API knows it.
    if (err instanceof FieldValueError) throw new AppError(err.code, err.message, { ...err.details, field: def.name })
    throw err
  }
}

/** Whether a string, or any key or string inside a JSON value, contains U+0000. */
function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000')
  if (Array.isArray(value)) return value.some(holdsNul)
  if (value !== null && typeof value === 'object')
    return Object.entries(value).some(([key, item]) => key.includes('\u0000') || holdsNul(item))
  return false
}

/** The API value of one stored column. */
export function readValue(def: FieldDef, value: unknown, kind: DbKind): unknown {
  if (value === null || value === undefined) return null
  return fieldTypeOf(def.type).read(value, def, kind)
}

/** How a translatable field is read: one locale's string, or the whole map for `*`. */
export function localise(value: unknown, locale: string): unknown {
  if (locale === '*' || value === null || typeof value !== 'object' || Array.isArray(value)) return value
  const text = (value as Record<string, unknown>)[locale]
  return text === undefined ? null : text
}
