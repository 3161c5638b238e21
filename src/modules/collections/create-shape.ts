import { AppError } from '../../lib/errors.js'
import { pickShape } from '../../lib/create-shape.js'
import { rejectInvalid } from '../../lib/http/index.js'
import { checkCollectionName, draftFields } from './definition/index.js'
import { CreateCollectionSchema } from './schemas.js'

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
    fields: collection.fields.map(canonicalField),
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

/** A field as compared: both JSON spellings are `json`; a lookup's or rollup's derived `resultType` is left out. */
function canonicalField({ resultType: _derived, ...field }: Record<string, unknown>): Record<string, unknown> {
  return field.type === 'jsonb' ? { ...field, type: 'json' } : field
}

/**
 * The create shape a collection brick's body makes, without saving it: the create route's schema, the
 * storage type's default (`d1`), fields canonical, indexes with `unique` stated. A blueprint's
 * `accessPreset` (the spec's spelling) becomes `accessControl.preset`. Reads nothing; field rules are the
 * create call's (a bad field fails there). Throws invalid_request (the route's 400).
 */
export function collectionDesiredShape(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new AppError('invalid_request', 'A collection is a JSON object')
  const { accessPreset, ...rest } = body as Record<string, unknown>
  const parsed = CreateCollectionSchema.safeParse(rest)
  if (!parsed.success) rejectInvalid({ success: false, target: 'json', error: parsed.error })
  const input = parsed.data!
  // What the service would refuse without reading anything: the name, each field's shape and name.
  checkCollectionName(input.name)
  draftFields(input.fields)
  const control = input.accessControl ?? (accessPreset === undefined ? undefined : { preset: accessPreset })
  const indexes = Array.isArray(input.indexes) ? (input.indexes as Record<string, unknown>[]) : []
  return collectionCreateShape({
    name: input.name,
    storageType: input.storageType ?? 'd1',
    databaseId: input.databaseId ?? '',
    fields: input.fields.map((field) =>
      field !== null && typeof field === 'object' ? canonicalField(field as Record<string, unknown>) : field,
    ) as Record<string, unknown>[],
    indexes: indexes.map((index) => ({
      fields: (index.fields ?? []) as string[],
      unique: (index.unique ?? false) as boolean,
    })),
    accessControl: control ?? null,
  })
}
