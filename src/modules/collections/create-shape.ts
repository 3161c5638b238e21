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

/**
 * The access brick (the spec's `access` kind): the body of PATCH /collections/:name that gives a collection
 * this access config again, with the collection it applies to. Both keys are always stated (an absent config
 * reads as `team` without sharing), since a blueprint must state sharing explicitly.
 */
export function accessCreateShape(collection: { name: string; accessControl: unknown }): Record<string, unknown> {
  const config = (collection.accessControl ?? {}) as { preset?: string; sharing?: boolean }
  return {
    collection: collection.name,
    accessControl: { preset: config.preset ?? 'team', sharing: config.sharing ?? false },
  }
}
