// The records filter, typed against a record's fields: the object format of docs/query-language.md.

/** A record's system columns, as every record carries them (owned_by once the collection is owner-scoped). */
export interface SystemFields {
  id: string
  /** Unix seconds. */
  created_at: number
  updated_at: number
  created_by: string | null
  updated_by: string | null
  deleted_at: number | null
  /** Moves by one on every write: the optimistic-concurrency version (docs/records.md). */
  _version: number
  owned_by?: string | null
}

export type SystemKey = keyof SystemFields

/** A record as the API answers it: its fields and the system columns. */
export type RecordOf<R> = Omit<R, SystemKey> & SystemFields

/** The fields a filter, a sort or a projection may name: the record's own and the system columns. */
export type FieldKey<R> = Extract<keyof R | SystemKey, string>

type ValueAt<R, K> = K extends keyof R ? R[K] : K extends SystemKey ? SystemFields[K] : never

/** Server-side variables; each counts as the type it stands for (docs/query-language.md, "Dynamic variables"). */
export type TextVariable = '$CURRENT_USER' | '$CURRENT_ROLE' | '$PROJECT_ID' | '$NOW_DATE'
export type NumberVariable = '$NOW'

/** A value compared with a field of type V: V itself (a number field also takes `$NOW`). */
type Comparable<V> = [V] extends [number] ? V | NumberVariable : V

type Element<V> = V extends readonly (infer E)[] ? E : never

/** The operators a field of type V takes: ordering on numbers and text, text operators on text, membership on arrays. */
export type Operators<V> = {
  _eq?: Comparable<V> | null
  _neq?: Comparable<V> | null
  _in?: Comparable<V>[]
  _nin?: Comparable<V>[]
  _null?: true
  _nnull?: true
} & ([V] extends [number | string]
  ? { _gt?: Comparable<V>; _gte?: Comparable<V>; _lt?: Comparable<V>; _lte?: Comparable<V> }
  : unknown) &
  ([V] extends [string]
    ? {
        _contains?: string
        _ncontains?: string
        _starts_with?: string
        _nstarts_with?: string
        _ends_with?: string
        _nends_with?: string
      }
    : [V] extends [readonly unknown[]]
      ? { _contains?: Element<V>; _ncontains?: Element<V> }
      : unknown)

/** What a filter says of one field: a value (shorthand for `_eq`), null, or an object of operators. */
export type Condition<V> = Comparable<NonNullable<V>> | null | Operators<NonNullable<V>>

/** Keys whose values are JSON objects: a dotted path reaches inside them (`meta.size`), untyped as JSON is. */
type JsonKey<R> = {
  [K in keyof R]-?: NonNullable<R[K]> extends readonly unknown[]
    ? never
    : NonNullable<R[K]> extends Record<string, unknown>
      ? K
      : unknown extends R[K]
        ? K
        : never
}[keyof R] &
  string

/**
 * A filter over records of type R: field keys with a value of the field's type or operators, `_and` and `_or`
 * of filters; several keys mean AND. A wrong field name or a value of the wrong type does not compile. Paths the
 * types cannot follow (through a relation: `assignee.name`) go in a string filter instead (`filter: JSON.stringify(…)`).
 */
export type Filter<R> = { [K in FieldKey<R>]?: Condition<ValueAt<R, K>> } & {
  [P in `${JsonKey<R>}.${string}`]?: unknown
} & {
  _and?: Filter<R>[]
  _or?: Filter<R>[]
}

/** A sort key: a field, or `-field` for descending. */
export type SortKey<R> = FieldKey<R> | `-${FieldKey<R>}`
