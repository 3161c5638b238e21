import type { Collection } from './collection.js'
import { indexColumn, type CompoundIndex } from './definition/index.js'
import type { FieldDef } from './field-types/index.js'

/**
 * What names a field of a collection outside its own field list: other collections' relations, lookups and
 * rollups (here), and what other modules keep (grants, search indexes, lenses, flows), which they report
 * through the collections module's `fieldReferences` (decision 062). A drop is refused while any exists; a
 * rename rewrites the `updatable` ones and reports the rest.
 */
export interface FieldReference {
  /** What holds it. */
  readonly kind: 'field' | 'index' | 'grant' | 'search_index' | 'lens' | 'flow' | 'renderer' | 'view'
  /** Its id (a collection's name for `field`, an index's name for `index`). */
  readonly id: string
  /** Where the field is named, for people: `tasks.project_title (lookup)`, `role editor: fields`. */
  readonly name: string
  /** A rename rewrites it; otherwise a rename reports it as a warning and leaves it as it is. */
  readonly updatable: boolean
}

export interface FieldReferenceQuery {
  readonly projectId: string
  readonly collection: string
  readonly field: string
  /** Why it is asked: a drop is refused by what names the field; a rename rewrites or reports it. */
  readonly purpose: 'drop' | 'rename'
}

/** A module's part: pushes the references to the queried field that it keeps. */
export type FieldReferenceFinder = (query: FieldReferenceQuery, found: FieldReference[]) => Promise<void>
/** A module's part: rewrites its updatable references to `query.field` to `to`, after the rename committed. */
export type FieldRenameListener = (query: FieldReferenceQuery, to: string) => Promise<void>

/** How a field of another collection names `collection.field`, or null. */
function referenceOf(def: FieldDef, fields: readonly FieldDef[], collection: string, field: string): string | null {
  if (def.relationConfig?.targetCollection === collection && def.relationConfig.displayField === field)
    return 'relation displayField'
  const through = def.lookupConfig?.relationField ?? def.rollupConfig?.relationField
  const target = def.lookupConfig?.targetField ?? def.rollupConfig?.targetField
  if (through === undefined || target !== field) return null
  const relation = fields.find((f) => f.name === through)
  if (relation?.relationConfig?.targetCollection !== collection) return null
  return def.lookupConfig ? 'lookup targetField' : 'rollup targetField'
}

/** Other collections' fields that name `collection.field` (a rename rewrites them). */
export function collectionReferences(
  collections: Iterable<Collection>,
  collection: string,
  field: string,
): FieldReference[] {
  const found: FieldReference[] = []
  for (const other of collections) {
    if (other.name === collection) continue
    for (const def of other.fields) {
      const how = referenceOf(def, other.fields, collection, field)
      if (how)
        found.push({ kind: 'field', id: other.name, name: `${other.name}.${def.name} (${how})`, updatable: true })
    }
  }
  return found
}

/** The other collections whose fields name `collection.from`, with their field lists renamed to `to`. */
export function renamedInOthers(
  collections: Iterable<Collection>,
  collection: string,
  from: string,
  to: string,
): { collection: Collection; fields: FieldDef[] }[] {
  const out: { collection: Collection; fields: FieldDef[] }[] = []
  for (const other of collections) {
    if (other.name === collection) continue
    let touched = false
    const fields = other.fields.map((def) => {
      const how = referenceOf(def, other.fields, collection, from)
      if (!how) return def
      touched = true
      if (how === 'relation displayField')
        return { ...def, relationConfig: { ...def.relationConfig!, displayField: to } }
      if (def.lookupConfig) return { ...def, lookupConfig: { ...def.lookupConfig, targetField: to } }
      return { ...def, rollupConfig: { ...def.rollupConfig!, targetField: to } }
    })
    if (touched) out.push({ collection: other, fields })
  }
  return out
}

/** The collection's own compound indexes that name `field`. */
export function indexReferences(indexes: readonly CompoundIndex[], field: string): FieldReference[] {
  return indexes
    .filter((index) => index.fields.some((spec) => indexColumn(spec).field === field))
    .map((index) => ({ kind: 'index', id: index.name, name: `index (${index.fields.join(', ')})`, updatable: true }))
}

const renameSpec = (spec: string, renames: Readonly<Record<string, string>>): string => {
  const { field, descending } = indexColumn(spec)
  const to = renames[field]
  return to === undefined ? spec : `${descending ? '-' : ''}${to}`
}

/** Compound index specs (as stored, or as sent) with renamed fields under their new names. */
export function renameIndexSpecs(indexes: unknown, renames: Readonly<Record<string, string>>): unknown {
  if (!Array.isArray(indexes)) return indexes
  return indexes.map((index: unknown) => {
    if (index === null || typeof index !== 'object') return index
    const fields = (index as { fields?: unknown }).fields
    if (!Array.isArray(fields)) return index
    const { name: _derived, ...rest } = index as Record<string, unknown>
    return { ...rest, fields: fields.map((spec) => (typeof spec === 'string' ? renameSpec(spec, renames) : spec)) }
  })
}

/**
 * A sent field list with the collection's own lookups and rollups following renamed relation fields: a
 * client renaming `assignee` may send its lookup still naming it, and meant the same relation.
 */
export function renameOwnReferences(fields: unknown, renames: Readonly<Record<string, string>>): unknown {
  if (!Array.isArray(fields) || Object.keys(renames).length === 0) return fields
  const follow = (config: unknown) => {
    if (config === null || typeof config !== 'object') return config
    const through = (config as { relationField?: unknown }).relationField
    const to = typeof through === 'string' ? renames[through] : undefined
    return to === undefined ? config : { ...config, relationField: to }
  }
  return fields.map((def: unknown) => {
    if (def === null || typeof def !== 'object') return def
    const d = def as Record<string, unknown>
    return {
      ...d,
      ...(d.lookupConfig !== undefined ? { lookupConfig: follow(d.lookupConfig) } : {}),
      ...(d.rollupConfig !== undefined ? { rollupConfig: follow(d.rollupConfig) } : {}),
    }
  })
}

/**
 * Whether free text (a lens's template, a flow's step configs as JSON) names `field` as a word: what a
 * drop refuses and a rename reports, since such text cannot be rewritten safely (a `title` in a template
 * may be the field or a word of the page). Field names are `[a-z][a-z0-9_]*`, so the name is a plain pattern.
 */
export function mentionsField(text: string, field: string): boolean {
  return new RegExp(`(?<![A-Za-z0-9_$])${field}(?![A-Za-z0-9_])`).test(text)
}
