import type { DbKind } from '../../../lib/db/handle.js'
import type { FieldTypeName } from './registry.js'

/** The 21 field types of addendum §4, by canonical name (`jsonb` is an alias of `json`): the registry's. */
export type { FieldTypeName }

/** The types that are stored in a column (every type but the computed lookup and rollup). */
export type StoredTypeName = Exclude<FieldTypeName, 'lookup' | 'rollup'>

/** How the filter compiler compares a field; the same union as the compiler's `ColumnKind`. */
export type ValueKind = 'text' | 'integer' | 'number' | 'boolean' | 'json'

export type Dialect = DbKind

export type RelationType = 'belongsTo' | 'hasMany'
export type OnDelete = 'set-null' | 'cascade' | 'restrict'
export type RollupFunction = 'count' | 'sum' | 'avg' | 'min' | 'max'

export interface RelationConfig {
  targetCollection: string
  relationType: RelationType
  displayField?: string
  /** Defaults to `set-null` when normalised. */
  onDelete: OnDelete
}

export interface LookupConfig {
  /** A belongsTo relation field of this collection. */
  relationField: string
  /** A stored field of the relation's target collection. */
  targetField: string
}

export interface RollupConfig {
  /** A hasMany relation field of this collection. */
  relationField: string
  function: RollupFunction
  /** A field of the target collection; absent for `count` only. */
  targetField?: string
}

export interface ValidationRules {
  /** In characters (code points), not bytes or UTF-16 units. */
  minLength?: number
  maxLength?: number
  min?: number
  max?: number
  /** A regular expression source (`u` flag, not anchored implicitly; no backreferences or lookarounds), matched in linear time. */
  pattern?: string
}

/**
 * A checked, normalised field definition: the type is canonical (aliases collapsed), absent options are
 * omitted rather than null, `relationConfig.onDelete` is filled in, and `resultType` (lookup and rollup
 * only) is derived by the server, never taken from a client.
 */
export interface FieldDef {
  name: string
  type: FieldTypeName
  required: boolean
  unique: boolean
  indexed: boolean
  label?: string
  enumValues?: string[]
  defaultValue?: unknown
  relationConfig?: RelationConfig
  validationRules?: ValidationRules
  lookupConfig?: LookupConfig
  rollupConfig?: RollupConfig
  resultType?: StoredTypeName
  translatable?: boolean
  /** Addendum §4 `structure` of a json field, checked and normalised (a `Structure`: read it with `structureOf`). */
  structure?: unknown
}

/**
 * What a definition check may look at besides the field itself. The fields of `collection` always come
 * from `fields` (the definition being checked), so a relation may point at its own collection.
 */
export interface DefinitionContext {
  readonly collection: string
  /** This collection's fields, types already canonical. */
  readonly fields: readonly FieldDef[]
  /** The project's other collections and their (normalised) fields; an entry for `collection` is ignored. */
  readonly collections: ReadonlyMap<string, readonly FieldDef[]>
}

/** The fields of a collection the context knows, or undefined for an unknown collection. */
export function fieldsOf(context: DefinitionContext, collection: string): readonly FieldDef[] | undefined {
  return collection === context.collection ? context.fields : context.collections.get(collection)
}
