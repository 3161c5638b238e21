import { createHash } from 'node:crypto'
import { z } from 'zod'
import { AppError } from '../../../lib/errors.js'
import { fieldTypeOf, type FieldDef } from '../field-types/index.js'

/**
 * A compound index a collection declares (beyond the spec, decision 024): its columns in order, each
 * ascending or (`-name`) descending, and whether it is unique. `name` is derived, never chosen.
 */
export interface CompoundIndex {
  readonly name: string
  readonly fields: readonly string[]
  readonly unique: boolean
}

/** Indexes a collection may declare, and columns in one: each index costs every write of the table. */
export const compoundIndexLimits = { indexes: 16, fields: 8 } as const

/** The system columns an index may name; `id` ends every non-unique one already, `deleted_at` is its condition. */
const indexableSystemColumns: ReadonlySet<string> = new Set([
  'created_at',
  'updated_at',
  'created_by',
  'updated_by',
  'owned_by',
])

const IndexInputSchema = z.strictObject({
  fields: z.array(z.string().max(60)).min(1).max(compoundIndexLimits.fields),
  unique: z.boolean().optional(),
  /** Output only (derived): accepted so GET's `indexes` round-trip, then ignored. */
  name: z.unknown().optional(),
})

/** One column of an index: the field and its direction. */
export function indexColumn(spec: string): { field: string; descending: boolean } {
  return spec.startsWith('-') ? { field: spec.slice(1), descending: true } : { field: spec, descending: false }
}

/**
 * The name of an index: `<collection>__ix_` and 8 hex digits of a hash of what it indexes. At most 63
 * characters for any collection name (50), so never shortened; distinct from every other derived name
 * (those end in `__idx`, `__uq`, `__pkey` or begin `__search`, docs/collections.md), and from the
 * collection's other indexes (checked: two would have to share a 32-bit hash).
 */
export function compoundIndexName(collection: string, fields: readonly string[], unique: boolean): string {
  const hash = createHash('sha256').update(JSON.stringify({ fields, unique })).digest('hex').slice(0, 8)
  return `${collection}__ix_${hash}`
}

function refuse(message: string, details: Record<string, unknown>): AppError {
  return new AppError('invalid_request', message, { property: 'indexes', ...details })
}

/**
 * Checks a collection's `indexes` (absent or null: none) against its normalised fields and returns them
 * normalised (`unique` filled in, `name` derived). Throws AppError invalid_request (400) with
 * `details: { property: 'indexes', index, field? }`: not a list, too many, a malformed entry, an unknown
 * field, a field that cannot be indexed (computed or JSON), a field twice in one index, two indexes over
 * the same fields.
 */
export function normaliseIndexes(input: unknown, collection: string, fields: readonly FieldDef[]): CompoundIndex[] {
  if (input === undefined || input === null) return []
  if (!Array.isArray(input)) throw refuse('indexes must be a list of { fields, unique }', { index: null })
  if (input.length > compoundIndexLimits.indexes) {
    throw refuse(`A collection declares at most ${compoundIndexLimits.indexes} indexes`, {
      index: compoundIndexLimits.indexes,
    })
  }
  const byName = new Map(fields.map((f) => [f.name, f]))
  const seen = new Map<string, number>()
  const names = new Set<string>()
  return input.map((raw: unknown, index): CompoundIndex => {
    const parsed = IndexInputSchema.safeParse(raw)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      const what =
        issue?.code === 'unrecognized_keys'
          ? `unknown property "${String(issue.keys[0]).slice(0, 60)}"`
          : `${issue?.path.map(String).join('.') || 'entry'}: ${issue?.message ?? 'invalid'}`
      throw refuse(
        `Index ${index}: ${what}; an index is { fields: [1 to ${compoundIndexLimits.fields} field names, "-name" descending], unique? }`,
        { index },
      )
    }
    const columns = parsed.data.fields.map(indexColumn)
    const inIndex = new Set<string>()
    for (const { field } of columns) {
      const problem = columnProblem(field, byName)
      if (problem) throw refuse(`Index ${index}: ${problem}`, { index, field: field.slice(0, 60) })
      if (inIndex.has(field)) throw refuse(`Index ${index}: "${field}" appears twice`, { index, field })
      inIndex.add(field)
    }
    // Directions do not count: either database walks an index both ways.
    const key = columns.map((c) => c.field).join(',')
    const earlier = seen.get(key)
    if (earlier !== undefined)
      throw refuse(`Indexes ${earlier} and ${index} cover the same fields (${key})`, { index, duplicateOf: earlier })
    seen.set(key, index)
    const unique = parsed.data.unique ?? false
    const specs = columns.map((c) => (c.descending ? `-${c.field}` : c.field))
    const name = compoundIndexName(collection, specs, unique)
    if (names.has(name))
      throw refuse(`Index ${index}: its derived name collides with another index's; reorder its fields`, { index })
    names.add(name)
    return { name, fields: specs, unique }
  })
}

/** Why a column cannot be in an index, or null. */
function columnProblem(field: string, byName: ReadonlyMap<string, FieldDef>): string | null {
  if (indexableSystemColumns.has(field)) return null
  const def = byName.get(field)
  if (!def)
    return `"${field.slice(0, 60)}" is not a field of the collection (system columns allowed: ${[...indexableSystemColumns].join(', ')})`
  const type = fieldTypeOf(def.type)
  if (type.column(def, 'sqlite') === null) return `"${field}" is computed (${def.type}) and has no column to index`
  if (type.valueKind(def) === 'json')
    return `"${field}" holds JSON (${def.type}${def.translatable ? ', translatable' : ''}), which lists cannot sort or compare by index`
  return null
}

/** The value kind of an index column (text columns sort by code point). */
export function indexColumnIsText(field: string, fields: readonly FieldDef[]): boolean {
  if (field === 'created_by' || field === 'updated_by' || field === 'owned_by') return true
  const def = fields.find((f) => f.name === field)
  return def !== undefined && fieldTypeOf(def.type).valueKind(def) === 'text'
}
