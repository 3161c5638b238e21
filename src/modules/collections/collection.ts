import type { TableLayout } from './table-layout.js'
import { isDocumentStorage } from './document-table.js'
import type { AccessControl, CompoundIndex } from './definition/index.js'
import type { FieldDef } from './field-types/index.js'
import type { CollectionRow } from './store.js'

export const storageTypes = ['d1', 'r2_sql', 'kv', 'remote', 'durable_object'] as const
export type StorageType = (typeof storageTypes)[number]
// The storage types built so far; the rest are refused with a clear error rather than silently mapped.
export const availableStorage: ReadonlySet<StorageType> = new Set(['d1', 'remote', 'durable_object', 'kv', 'r2_sql'])

/** How a collection's table keeps its fields: `kv` in one JSON document (document-table.ts), the others a column each. */
export function layoutOf(collection: Pick<Collection, 'storageType'>): TableLayout {
  return isDocumentStorage(collection.storageType) ? 'document' : 'columns'
}

/** A collection as the rest of Plinth sees it. */
export interface Collection {
  readonly id: string
  readonly projectId: string
  readonly name: string
  readonly storageType: StorageType
  readonly databaseId: string
  readonly schemaVersion: number
  readonly fields: readonly FieldDef[]
  /** Compound indexes it declares (beyond the spec, decision 024). */
  readonly indexes: readonly CompoundIndex[]
  readonly accessControl: AccessControl
  /** owned_by appears in responses once the collection used owner scoping or had a record transferred. */
  readonly ownerScoped: boolean
  readonly createdAt: number
  readonly updatedAt: number
}

export interface ColumnStatus {
  name: string
  exists: boolean
  type: string
}

/**
 * Told about a PATCH of a collection's field list: `before` runs first and may refuse it (nothing is
 * written then), `after` once it is stored. The structure module uses them for addendum §4 (strict needs
 * a clean scan; running scans of a changed structure are superseded).
 */
export interface FieldChangeHooks {
  before(collection: Collection, next: readonly FieldDef[]): Promise<void>
  after(collection: Collection, next: readonly FieldDef[]): Promise<void>
}

/** A registry row as the frozen Collection the rest of Plinth sees. */
export function toCollection(row: CollectionRow): Collection {
  return Object.freeze({
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    storageType: row.storage_type as StorageType,
    databaseId: row.database_id,
    schemaVersion: row.schema_version,
    fields: Object.freeze(JSON.parse(row.fields) as FieldDef[]),
    indexes: Object.freeze(row.indexes ? (JSON.parse(row.indexes) as CompoundIndex[]) : []),
    accessControl: row.access_control ? (JSON.parse(row.access_control) as AccessControl) : null,
    ownerScoped: Boolean(row.owner_scoped),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  })
}
