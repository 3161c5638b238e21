import { AppError } from '../../lib/errors.js'
import { comparePresence } from '../../lib/filter/index.js'
import type { Principal } from '../../lib/principal.js'
import { fieldTypeOf } from '../collections/index.js'
import { alwaysReadable, readValue, writeValue } from './codec.js'
import type { Opened, Opener, RecordsDeps } from './context.js'
import type { ApiRecord } from './events.js'
import { applyOperator, checkOperand, jsonOperators, operatorPath, type JsonOperator } from './json-ops.js'
import { both } from './list.js'
import { assertAllowed, assertInScope, createInput, inLocale, newRow, writableField } from './new-row.js'
import { createWritePipeline, sameValue, type Committed } from './pipeline.js'
import { fullRecord } from './present.js'
import { assertReferencesExist } from './references.js'
import { applyCascade, cascadeIntents, planCascade } from './relations.js'
import type { Row } from './store.js'
import { noteWritten } from './written.js'

export type VersionCheck = { version: number; onMismatch: 'precondition_failed' | 'conflict' } | null

// An update without a version retries when another write lands between its read and its write. Every lost
// attempt means some other write committed, so N concurrent writers of one record need at most N attempts;
// the bound only stops a writer starved by an endless stream of others (5 lost 20 concurrent $push writers).
const maxAttempts = 100

type Operation = { op: JsonOperator; path: [string, ...string[]]; value: unknown }

/** The values an update writes on `before`: the body's fields, then its JSON operators applied to the record's values. */
function incomingOf(fields: ApiRecord, operations: readonly Operation[], before: ApiRecord): ApiRecord {
  const changes: ApiRecord = { ...fields }
  for (const { op, path, value } of operations) {
    const [field, ...rest] = path
    const base = field in changes ? changes[field] : before[field]
    changes[field] = applyOperator(base, rest, op, value, path.join('.')) ?? null
  }
  return changes
}

export function createWriter(deps: RecordsDeps, open: Opener) {
  const { clock } = deps
  const pipeline = createWritePipeline(deps)

  return {
    /**
     * Creates a record. Privileged callers (admin access) may set id, created_at and updated_at; for others
     * those keys are dropped. Relation values must name existing records, file values files the caller may
     * read (validation_error otherwise).
     * Throws invalid_field, missing_field, validation_error, forbidden, already_exists, or what a hook throws.
     */
    async create(
      principal: Principal,
      name: string,
      body: Record<string, unknown>,
      locale?: string,
    ): Promise<{ opened: Opened; row: Row }> {
      const opened = await open(principal, name, 'create', locale)
      const input = createInput(opened, body)
      const row = await pipeline.run(
        principal,
        [{ action: 'create', collection: opened.collection, before: null, data: input.data }],
        async ([data]) => {
          const { row } = newRow(opened, data!, input.system, clock.seconds())
          await assertReferencesExist(opened, { row })
          const stored = await opened.store.insert(row)
          return {
            committed: [
              { type: 'record.create', collection: opened.collection, after: fullRecord(opened.shape, stored) },
            ],
            result: stored,
          }
        },
      )
      // Rows made one by one count towards the statistics too: a table grown by creates is planned as it is.
      noteWritten(deps, opened, 1)
      return { opened, row }
    },

    /**
     * Updates fields and applies JSON operators. With a version (If-Match → 412, ?version or _version →
     * 409) the write happens only at that version; without one it applies to the current record. The hooks
     * run once, on the record as first read; when another write lands before this one, the record is read
     * again and the hooked changes applied to it without running the hooks again (decision 021): field
     * values as the hooks left them, JSON operators recomputed on the new value (409 conflict when a hook
     * changed a value an operator computes). deleted_at and other system keys in the body are ignored.
     * Relation ids the update adds must name existing records, file ids it adds files the caller may read
     * (validation_error otherwise).
     * Throws record_not_found, conflict, precondition_failed, invalid_field, validation_error, forbidden, or what a hook throws.
     */
    async update(
      principal: Principal,
      name: string,
      id: string,
      body: Record<string, unknown>,
      check: VersionCheck,
      locale?: string,
    ): Promise<{ opened: Opened; row: Row }> {
      const opened = await open(principal, name, 'update', locale)
      const fields: ApiRecord = {}
      const operations: Operation[] = []
      for (const [key, value] of Object.entries(body)) {
        if ((jsonOperators as readonly string[]).includes(key)) {
          if (value === null || typeof value !== 'object' || Array.isArray(value))
            throw new AppError('invalid_request', `${key} maps field paths to values`)
          for (const [path, operand] of Object.entries(value as Record<string, unknown>)) {
            const parsed = operatorPath(path)
            const def = writableField(opened, parsed[0])
            if (fieldTypeOf(def.type).valueKind(def) !== 'json')
              throw new AppError('invalid_request', `${key}: "${def.name}" is not a JSON field`, { field: def.name })
            checkOperand(key as JsonOperator, parsed, operand)
            operations.push({ op: key as JsonOperator, path: parsed, value: operand })
          }
        } else if (!alwaysReadable.has(key)) {
          writableField(opened, key)
          fields[key] = value
        }
      }
      assertAllowed(opened, [...Object.keys(fields), ...operations.map((o) => o.path[0])])

      let current = await opened.store.byId(id, opened.scope.rows, false)
      if (!current) throw new AppError('record_not_found', 'Record not found')
      if (check && Number(current._version) !== check.version) throw versionMismatch(check)
      let before = fullRecord(opened.shape, current)
      let incoming = incomingOf(fields, operations, before)
      const operated = new Set(operations.map((o) => o.path[0]))

      const row = await pipeline.run(
        principal,
        [{ action: 'update', collection: opened.collection, before, data: incoming }],
        async ([hooked]) => {
          let changes = hooked!
          for (let attempt = 0; ; attempt++) {
            const set: Row = { updated_at: clock.seconds(), updated_by: principal.userId }
            const after: ApiRecord = { ...before }
            for (const [key, value] of Object.entries(changes)) {
              const def = writableField(opened, key)
              const next = inLocale(opened, def, value, before[key])
              set[key] = writeValue(def, next)
              after[key] = readValue(def, set[key], opened.shape.kind)
            }
            assertInScope(opened, after, 'update')
            await assertReferencesExist(opened, { row: set, before })
            const updated = await opened.store.update(id, set, opened.scope.rows, Number(current!._version))
            if (updated) {
              const committed: Committed[] = [
                {
                  type: 'record.update',
                  collection: opened.collection,
                  before,
                  after: fullRecord(opened.shape, updated),
                },
              ]
              return { committed, result: updated }
            }
            // Another write landed between the read and the update.
            if (check) throw versionMismatch(check)
            if (attempt + 1 >= maxAttempts) throw new AppError('conflict', 'The record keeps changing; retry')
            current = await opened.store.byId(id, opened.scope.rows, false)
            if (!current) throw new AppError('record_not_found', 'Record not found')
            before = fullRecord(opened.shape, current)
            const recomputed = incomingOf(fields, operations, before)
            for (const field of operated) {
              if (!sameValue(changes[field], incoming[field])) {
                throw new AppError(
                  'conflict',
                  `The record changed while it was written, and a hook changed "${field}", which a JSON operator computes; retry`,
                  { field },
                )
              }
              changes = { ...changes, [field]: recomputed[field] }
            }
            incoming = recomputed
          }
        },
      )
      return { opened, row }
    },

    /**
     * Soft-deletes (or with `permanent`, removes, even an already soft-deleted row). The relation cascade
     * is planned first, then the record's hooks and those of every record the cascade deletes or clears
     * run, then the writes: a refusal anywhere leaves everything as it was. Throws record_not_found,
     * conflict, or what a hook throws.
     */
    async delete(principal: Principal, name: string, id: string, permanent: boolean): Promise<void> {
      const opened = await open(principal, name, 'delete')
      const current = await opened.store.byId(id, opened.scope.rows, permanent)
      if (!current) throw new AppError('record_not_found', 'Record not found')
      const before = fullRecord(opened.shape, current)
      const plan = await planCascade(deps, opened.collection, [id], permanent)
      const intents = [
        { action: 'delete' as const, collection: opened.collection, before, data: {} },
        ...cascadeIntents(plan),
      ]
      await pipeline.run(principal, intents, async ([, ...cascaded]) => {
        const committed = await applyCascade(plan, cascaded, clock.seconds())
        if (permanent) {
          if (!(await opened.store.remove(id, opened.scope.rows)))
            throw new AppError('record_not_found', 'Record not found')
          await deps.shares.deleteOfRecord(opened.collection.id, id)
        } else {
          const set = { deleted_at: clock.seconds(), updated_at: clock.seconds(), updated_by: principal.userId }
          if (!(await opened.store.update(id, set, opened.scope.rows, null)))
            throw new AppError('record_not_found', 'Record not found')
        }
        committed.push({ type: 'record.delete', collection: opened.collection, before, permanent })
        return { committed, result: undefined }
      })
    },

    /** Brings a soft-deleted record back; missing, hidden and not-deleted are the same 404. Throws record_not_found, or what a hook throws. */
    async restore(principal: Principal, name: string, id: string): Promise<void> {
      const opened = await open(principal, name, 'delete')
      const deleted = both(opened.scope.rows, comparePresence(['deleted_at'], 'not_null'))
      // Read first, so the hooks and the event see the record as it was; the write is at that version, so
      // the before is exact.
      const current = await opened.store.byId(id, deleted, true)
      if (!current) throw new AppError('record_not_found', 'Record not found')
      const before = fullRecord(opened.shape, current)
      await pipeline.run(
        principal,
        [{ action: 'restore', collection: opened.collection, before, data: {} }],
        async () => {
          const set = { deleted_at: null, updated_at: clock.seconds(), updated_by: principal.userId }
          const restored = await opened.store.update(id, set, deleted, Number(current._version), true)
          if (!restored) throw new AppError('record_not_found', 'Record not found')
          return {
            committed: [
              {
                type: 'record.update',
                collection: opened.collection,
                before,
                after: fullRecord(opened.shape, restored),
              },
            ],
            result: undefined,
          }
        },
      )
    },
  }
}

function versionMismatch(check: NonNullable<VersionCheck>): AppError {
  return check.onMismatch === 'precondition_failed'
    ? new AppError('precondition_failed', 'The record changed since that version (If-Match)', {
        expected: check.version,
      })
    : new AppError('conflict', 'The record changed since that version', { expected: check.version })
}

export type Writer = ReturnType<typeof createWriter>
