import { isOwnDatabaseId, MAIN_BINDING, ownDatabaseId } from '../../../lib/db/index.js'
import { AppError } from '../../../lib/errors.js'
import type { StorageType } from '../collection.js'
import { AccessControlSchema, type AccessControl } from '../definition/index.js'

/**
 * The database a new collection lives in: the project's own (d1, kv), a registered binding (remote), or one
 * made for it alone (durable_object, named after its id). Throws invalid_request, not_found.
 */
export function databaseFor(
  storageType: StorageType,
  requested: string | null | undefined,
  collectionId: string,
): string {
  // A kv collection is a table of the project's database like d1's; only its fields are kept otherwise (decision 035).
  if (storageType === 'kv') {
    if (requested && requested !== MAIN_BINDING)
      throw new AppError(
        'invalid_request',
        'A kv collection lives in the project database; databaseId cannot be chosen',
        { databaseId: requested },
      )
    return MAIN_BINDING
  }
  if (storageType === 'durable_object' || storageType === 'r2_sql') {
    if (requested)
      throw new AppError(
        'invalid_request',
        `A ${storageType} collection gets a database of its own; databaseId cannot be chosen`,
        { databaseId: requested },
      )
    return ownDatabaseId(collectionId)
  }
  if (storageType === 'd1') {
    if (requested && requested !== MAIN_BINDING)
      throw new AppError(
        'invalid_request',
        'A d1 collection lives in the project database; use storageType remote for another one',
      )
    return MAIN_BINDING
  }
  if (!requested) throw new AppError('invalid_request', 'A remote collection needs databaseId (a registered database)')
  // The project's own database is d1's, whatever it is called: labelled remote it would lie about where the data is.
  if (requested === MAIN_BINDING) {
    throw new AppError(
      'invalid_request',
      `A remote collection lives in a registered database; "${MAIN_BINDING}" is the project's own (storageType d1)`,
      { databaseId: requested },
    )
  }
  // Another collection's own database is not a binding: as unknown as any id that is not registered.
  if (isOwnDatabaseId(requested))
    throw new AppError('not_found', 'Database binding not found', { databaseId: requested })
  return requested
}

/** A request's accessControl (absent: none). Throws invalid_request. */
export function parseAccessControl(input: unknown): AccessControl {
  if (input === undefined) return null
  const parsed = AccessControlSchema.safeParse(input)
  if (!parsed.success) {
    throw new AppError(
      'invalid_request',
      'accessControl must be null or { preset: "private" | "team" | "public", sharing?: boolean }',
    )
  }
  return parsed.data
}
