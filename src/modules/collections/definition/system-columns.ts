import type { Dialect, ValueKind } from '../field-types/index.js'

/** A column every collection table has, before its own fields (core-api "System columns"). */
export interface SystemColumn {
  readonly name: string
  /** The SQL type for DDL per dialect (upper case for SQLite, like the field types' columns). */
  readonly type: Readonly<Record<Dialect, string>>
  readonly primaryKey: boolean
  readonly notNull: boolean
  readonly defaultValue?: number
  /** How filters and sorts compare it. */
  readonly valueKind: ValueKind
}

const text = { sqlite: 'TEXT', postgres: 'text' } as const
const bigint = { sqlite: 'INTEGER', postgres: 'bigint' } as const

export const systemColumns: readonly SystemColumn[] = Object.freeze([
  { name: 'id', type: text, primaryKey: true, notNull: true, valueKind: 'text' },
  { name: 'created_at', type: bigint, primaryKey: false, notNull: true, valueKind: 'integer' },
  { name: 'updated_at', type: bigint, primaryKey: false, notNull: true, valueKind: 'integer' },
  { name: 'created_by', type: text, primaryKey: false, notNull: false, valueKind: 'text' },
  { name: 'updated_by', type: text, primaryKey: false, notNull: false, valueKind: 'text' },
  { name: 'deleted_at', type: bigint, primaryKey: false, notNull: false, valueKind: 'integer' },
  {
    name: '_version',
    type: { sqlite: 'INTEGER', postgres: 'integer' },
    primaryKey: false,
    notNull: true,
    defaultValue: 1,
    valueKind: 'integer',
  },
  { name: 'owned_by', type: text, primaryKey: false, notNull: false, valueKind: 'text' },
] satisfies SystemColumn[])

export const systemColumnNames: ReadonlySet<string> = new Set(systemColumns.map((c) => c.name))

/** True when `name` is a system column (so a field may not take it). */
export function isSystemColumn(name: string): boolean {
  return systemColumnNames.has(name)
}
