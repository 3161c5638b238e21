import { checkFilterBounds } from '../../lib/filter/index.js'
import { AppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import type { Collection } from '../collections/index.js'
import type { ToolServices } from './types.js'

/** A collection as a key sees it: its definition with only the fields the key may read. */
export interface CollectionView {
  name: string
  storageType: string
  schemaVersion: number
  fields: Record<string, unknown>[]
  indexes: { name: string; fields: string[]; unique: boolean }[]
}

/**
 * The collection's definition with the fields the key may not read removed (hidden means missing): the
 * read scope's field allowlist when its records open for reading; a collection seen only through schema
 * read (no record access) shows every field, as GET /collections does to that caller. Indexes naming a
 * hidden field go too.
 */
export async function viewOf(
  principal: Principal,
  collection: Collection,
  services: ToolServices,
): Promise<CollectionView> {
  const allowed = await readableFields(principal, collection.name, services)
  const shown = (name: string) => allowed === null || allowed.includes(name)
  return {
    name: collection.name,
    storageType: collection.storageType,
    schemaVersion: collection.schemaVersion,
    fields: collection.fields.filter((f) => shown(f.name)).map((f) => ({ ...f }) as Record<string, unknown>),
    indexes: collection.indexes
      .filter((i) => i.fields.every(shown))
      .map((i) => ({ name: i.name, fields: [...i.fields], unique: i.unique })),
  }
}

/** The fields the caller may read (null: all), or none at all when only schema read lets it see the collection without holding it. */
async function readableFields(
  principal: Principal,
  name: string,
  services: ToolServices,
): Promise<readonly string[] | null> {
  try {
    const opened = await services.records.open(principal, name, 'read')
    return opened.scope.fields
  } catch (err) {
    if (!(err instanceof AppError) || (err.code !== 'forbidden' && err.code !== 'collection_not_found')) throw err
    return (await services.access.decide(principal, 'schema/*', 'read')).allowed ? null : []
  }
}

/** The collection the key may see, or collection_not_found (hidden means missing). */
export function visibleCollection(principal: Principal, name: string, services: ToolServices): Promise<Collection> {
  return services.collections.visible(principal, name)
}

/**
 * A filter argument (JSON text, or the object or array itself) as the JSON text the records service reads.
 * An object is held to the filter limits first (lib/filter bounds, iterative): writing one nested
 * thousands deep back to text would overflow the stack. Throws invalid_request past them.
 */
export function filterText(filter: unknown): string | undefined {
  if (filter === undefined || filter === null) return undefined
  if (typeof filter === 'string') return filter
  checkFilterBounds(filter, 'arguments.filter')
  return JSON.stringify(filter)
}
