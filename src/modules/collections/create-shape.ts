import { pickShape } from '../../lib/create-shape.js'

/** A collection as GET /collections/:name answers it (the parts its create body takes). */
interface CollectionWire {
  name: string
  storageType: string
  databaseId: string
  fields: readonly Record<string, unknown>[]
  indexes: readonly { fields: readonly string[]; unique: boolean }[]
  accessControl: unknown
  [key: string]: unknown
}

/**
 * The body of POST /collections that makes this collection again: name, storage type, the binding only
 * for `remote` (the others' databases are the project's or the collection's own, never chosen), each field
 * without what the server derives (a lookup's or rollup's `resultType`), compound indexes without their
 * derived names, and the access control when set.
 */
export function collectionCreateShape(collection: CollectionWire): Record<string, unknown> {
  return {
    ...pickShape(collection, ['name', 'storageType', 'accessControl']),
    ...(collection.storageType === 'remote' ? { databaseId: collection.databaseId } : {}),
    fields: collection.fields.map(({ resultType: _derived, ...field }) => field),
    indexes: collection.indexes.map((index) => ({ fields: [...index.fields], unique: index.unique })),
  }
}
