import { principalSnapshot, type PrincipalSnapshot } from '../../lib/events/index.js'
import type { Principal } from '../../lib/principal.js'
import type { ChangeRequest, FieldChange } from './changes/index.js'
import type { FieldDef } from './field-types/index.js'

/** Published after a schema change committed (PATCH /collections/:name); docs/events.md. */
export interface CollectionEvents extends Record<string, unknown> {
  'collection.update': CollectionUpdateEvent
}

/** One change of an existing field, as the audit entry holds it: the definition before and after. */
export interface CollectionFieldChange {
  kind: string
  field: string
  before: FieldDef | null
  after: FieldDef
}

/** What the change did: the audit entry's details (`collection.updated`), the per-field changes under `fields`. */
export interface CollectionChanges {
  /** The fields added, by name. */
  added: string[]
  /** The existing fields whose `indexed` flipped. */
  indexToggled: string[]
  /** Each change of an existing field (enum values, required, label, …), one entry per kind. */
  fields: CollectionFieldChange[]
  /** The removed enum values and what their rows were mapped to, when the request said. */
  enumChanges?: Record<string, Record<string, string>>
  /** Existing field → its new name, when the request renamed fields. */
  renames?: Record<string, string>
  /** The fields dropped with their data, when the request dropped fields. */
  drop?: string[]
  /** Compound indexes made and dropped, by name. */
  indexesAdded: string[]
  indexesDropped: string[]
}

export interface CollectionUpdateEvent {
  projectId: string
  /** The collection's name. */
  collection: string
  /** The schema version the change produced (the previous one plus one). */
  schemaVersion: number
  changes: CollectionChanges
  /** Who changed it. */
  principal: PrincipalSnapshot
  at: number
}

/** What updateCollection knows once the change committed; structural, so it holds whatever plan it used. */
export interface CommittedUpdate {
  actor: Principal
  collection: { projectId: string; name: string }
  schemaVersion: number
  change: {
    readonly added: readonly { name: string }[]
    readonly indexToggled: readonly { name: string }[]
    readonly indexesAdded: readonly { name: string }[]
    readonly indexesDropped: readonly { name: string }[]
  }
  fieldChanges: readonly FieldChange[]
  /** What the body said beside the field list; renames and drops are named only when it made some. */
  request: {
    readonly enumChanges: ChangeRequest['enumChanges']
    readonly renames?: Readonly<Record<string, string>>
    readonly drop?: readonly string[]
  }
  at: number
}

/**
 * The `collection.update` payload: plain JSON (flows get it as `$trigger.body`), names and definitions
 * only; the principal as its snapshot, so no session, key or capability of the caller is in it.
 */
export function collectionUpdateEvent(update: CommittedUpdate): CollectionUpdateEvent {
  const { change, request } = update
  const names = (list: readonly { name: string }[]) => list.map((item) => item.name)
  const enumChanges = Object.entries(request.enumChanges)
  const renames = Object.entries(request.renames ?? {})
  return {
    projectId: update.collection.projectId,
    collection: update.collection.name,
    schemaVersion: update.schemaVersion,
    changes: {
      added: names(change.added),
      indexToggled: names(change.indexToggled),
      fields: update.fieldChanges.map((c) => ({ kind: c.kind, field: c.field, before: c.before, after: c.after })),
      ...(enumChanges.length > 0
        ? { enumChanges: Object.fromEntries(enumChanges.map(([field, map]) => [field, { ...map }])) }
        : {}),
      ...(renames.length > 0 ? { renames: Object.fromEntries(renames) } : {}),
      ...(request.drop && request.drop.length > 0 ? { drop: [...request.drop] } : {}),
      indexesAdded: names(change.indexesAdded),
      indexesDropped: names(change.indexesDropped),
    },
    principal: principalSnapshot(update.actor),
    at: update.at,
  }
}
