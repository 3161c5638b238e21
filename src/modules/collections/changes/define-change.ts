import type { FieldDef } from '../field-types/index.js'
import type { FieldRows } from './field-rows.js'

/** What the PATCH body says about its changes besides the field list. */
export interface ChangeRequest {
  /** Per enum or multi_enum field, each removed value → the value its rows get (`enumChanges`). */
  readonly enumChanges: Readonly<Record<string, Readonly<Record<string, string>>>>
  /** Existing field → its new name (`renames`); the field list holds it under the new name. */
  readonly renames?: Readonly<Record<string, string>>
  /** Existing fields to drop with their data (`drop`); the field list no longer holds them. */
  readonly drop?: readonly string[]
}

/** One change of one field: `before` is null for an added field. */
export interface FieldChange {
  readonly kind: string
  readonly field: string
  readonly before: FieldDef | null
  readonly after: FieldDef
}

/** What a change that touches rows works with: the collection's rows, inside the change's transaction. */
export interface ChangeScope {
  readonly rows: FieldRows
  readonly request: ChangeRequest
}

/**
 * A kind of change a PATCH may make to an existing field: the definition properties it covers, a check
 * of the request alone (400, before anything runs), and, when rows are involved, `apply`, which runs in
 * the transaction that changes the table and refuses (409 conflict) when the rows do not allow it.
 */
export interface ChangeKind {
  readonly kind: string
  /** The properties of a field definition whose change this kind makes; a property no kind covers is refused. */
  readonly properties: readonly (keyof FieldDef)[]
  /** Throws AppError (400) when the request cannot be made whatever the rows. */
  readonly validate?: (change: FieldChange, request: ChangeRequest) => void
  /** Checks and rewrites the rows; throws AppError conflict (409), and the whole change is rolled back. */
  readonly apply?: (change: FieldChange, scope: ChangeScope) => Promise<void>
}

/** Identity, typed: one kind of change per value. */
export function defineChange(kind: ChangeKind): ChangeKind {
  return Object.freeze(kind)
}
