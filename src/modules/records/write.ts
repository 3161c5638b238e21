import { AppError } from '../../lib/errors.js'
import { comparePresence, evaluateFilter, type ResolvedFilterNode } from '../../lib/filter/index.js'
import { newId } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import type { FieldDef } from '../collections/index.js'
import { fieldTypeOf } from '../collections/index.js'
import { alwaysReadable, readValue, writeValue } from './codec.js'
import type { Opened, Opener, RecordsDeps } from './context.js'
import type { ApiRecord } from './events.js'
import { applyOperator, jsonOperators, operatorPath, type JsonOperator } from './json-ops.js'
import { both } from './list.js'
import { fullRecord } from './present.js'
import { cascadeDelete } from './relations.js'
import type { Row } from './store.js'

export type VersionCheck = { version: number; onMismatch: 'precondition_failed' | 'conflict' } | null

const settable = new Set(['id', 'created_at', 'updated_at'])
const idPattern = /^[A-Za-z0-9_-]{1,64}$/
// An update without a version retries when another write lands between its read and its write. Every lost
// attempt means some other write committed, so N concurrent writers of one record need at most N attempts;
// the bound only stops a writer starved by an endless stream of others (5 lost 20 concurrent $push writers).
const maxAttempts = 100

/** The field definition a body key writes; throws invalid_field for an unknown or computed field. */
function writableField(open: Opened, key: string): FieldDef {
  const def = open.shape.byName.get(key)
  if (!def) throw new AppError('invalid_field', `Unknown field "${key.slice(0, 60)}"`, { field: key.slice(0, 60) })
  if (fieldTypeOf(def.type).computed) throw new AppError('invalid_field', `"${key}" is computed and cannot be written`, { field: key })
  return def
}

/** Refuses fields outside the caller's allowlist (403, naming them). */
function assertAllowed(open: Opened, keys: readonly string[]): void {
  const allow = open.scope.fields
  if (!allow) return
  const refused = keys.filter((k) => !alwaysReadable.has(k) && !allow.includes(k))
  if (refused.length > 0) throw new AppError('forbidden', `You may not write ${refused.join(', ')}`, { fields: refused })
}

/** A translatable field written as a plain string lands in the request's locale. */
function inLocale(open: Opened, def: FieldDef, value: unknown, current: unknown): unknown {
  if (!def.translatable || typeof value !== 'string') return value
  if (open.locale === '*') throw new AppError('invalid_field', `"${def.name}" is translatable: send a locale → text map, or name one locale`, { field: def.name })
  const map = current && typeof current === 'object' && !Array.isArray(current) ? { ...(current as Record<string, unknown>) } : {}
  return { ...map, [open.locale]: value }
}

/** The stored record must stay inside the caller's rows for the action (a grant's item_filter, owner scoping). */
function assertInScope(scope: ResolvedFilterNode | null, record: ApiRecord, action: string): void {
  if (scope && !evaluateFilter(scope, record)) {
    throw new AppError('forbidden', `The record would be outside the rows you may ${action}`)
  }
}

function timestamp(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new AppError('invalid_field', `${field} must be Unix seconds`, { field })
  return value
}

export function createWriter(deps: RecordsDeps, open: Opener) {
  const { clock } = deps

  async function emit(type: 'record.create' | 'record.update' | 'record.delete', opened: Opened, before: ApiRecord | null, after: ApiRecord | null): Promise<void> {
    deps.events.emit(type, {
      projectId: opened.collection.projectId,
      collection: opened.collection.name,
      before,
      after,
      actor: { kind: opened.principal.kind, userId: opened.principal.userId },
      at: clock.seconds(),
    })
  }

  return {
    /**
     * Creates a record. Privileged callers (admin access) may set id, created_at and updated_at; for others
     * those keys are dropped. Throws invalid_field, missing_field, validation_error, forbidden, already_exists.
     */
    async create(principal: Principal, name: string, body: Record<string, unknown>, locale?: string): Promise<{ opened: Opened; row: Row }> {
      const opened = await open(principal, name, 'create', locale)
      let data: ApiRecord = {}
      const system: Partial<Record<'id' | 'created_at' | 'updated_at', unknown>> = {}
      for (const [key, value] of Object.entries(body)) {
        if (settable.has(key)) {
          if (opened.scope.admin) system[key as 'id'] = value
        } else if (!alwaysReadable.has(key)) {
          writableField(opened, key)
          data[key] = value
        }
      }
      assertAllowed(opened, Object.keys(data))
      data = await deps.hooks.run({ action: 'create', collection: opened.collection, principal, before: null, data })
      const now = clock.seconds()
      if (system.id !== undefined && (typeof system.id !== 'string' || !idPattern.test(system.id))) {
        throw new AppError('invalid_field', 'id must be 1-64 letters, digits, - or _', { field: 'id' })
      }
      const row: Row = {
        id: (system.id as string | undefined) ?? newId(),
        created_at: system.created_at === undefined ? now : timestamp(system.created_at, 'created_at'),
        updated_at: system.updated_at === undefined ? now : timestamp(system.updated_at, 'updated_at'),
        created_by: principal.userId,
        updated_by: principal.userId,
        deleted_at: null,
        _version: 1,
        owned_by: null,
      }
      for (const def of opened.shape.stored) {
        if (def.name in data) row[def.name] = writeValue(def, inLocale(opened, def, data[def.name], null))
        else if (def.defaultValue !== undefined) row[def.name] = writeValue(def, def.defaultValue)
        else if (def.required) throw new AppError('missing_field', `Field "${def.name}" is required`, { field: def.name })
        else row[def.name] = null
      }
      assertInScope(opened.scope.rows, fullRecord(opened.shape, row), 'create')
      const stored = await opened.store.insert(row)
      await emit('record.create', opened, null, fullRecord(opened.shape, stored))
      return { opened, row: stored }
    },

    /**
     * Updates fields and applies JSON operators. With a version (If-Match → 412, ?version or _version →
     * 409) the write happens only at that version; without one it applies to the current record (retrying
     * when another write lands in between). deleted_at and other system keys in the body are ignored.
     * Throws record_not_found, conflict, precondition_failed, invalid_field, validation_error, forbidden.
     */
    async update(principal: Principal, name: string, id: string, body: Record<string, unknown>, check: VersionCheck, locale?: string): Promise<{ opened: Opened; row: Row }> {
      const opened = await open(principal, name, 'update', locale)
      const fields: ApiRecord = {}
      const operations: { op: JsonOperator; path: [string, ...string[]]; value: unknown }[] = []
      for (const [key, value] of Object.entries(body)) {
        if ((jsonOperators as readonly string[]).includes(key)) {
          if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new AppError('invalid_request', `${key} maps field paths to values`)
          for (const [path, operand] of Object.entries(value as Record<string, unknown>)) {
            const parsed = operatorPath(path)
            const def = writableField(opened, parsed[0])
            if (fieldTypeOf(def.type).valueKind(def) !== 'json') throw new AppError('invalid_request', `${key}: "${def.name}" is not a JSON field`, { field: def.name })
            operations.push({ op: key as JsonOperator, path: parsed, value: operand })
          }
        } else if (!alwaysReadable.has(key)) {
          writableField(opened, key)
          fields[key] = value
        }
      }
      assertAllowed(opened, [...Object.keys(fields), ...operations.map((o) => o.path[0])])

      for (let attempt = 0; ; attempt++) {
        const current = await opened.store.byId(id, opened.scope.rows, false)
        if (!current) throw new AppError('record_not_found', 'Record not found')
        const before = fullRecord(opened.shape, current)
        if (check && Number(current._version) !== check.version) throw versionMismatch(check)
        let changes: ApiRecord = { ...fields }
        for (const { op, path, value } of operations) {
          const [field, ...rest] = path
          const base = field in changes ? changes[field] : before[field]
          changes[field] = applyOperator(base, rest, op, value, path.join('.')) ?? null
        }
        changes = await deps.hooks.run({ action: 'update', collection: opened.collection, principal, before, data: changes })
        const set: Row = { updated_at: clock.seconds(), updated_by: principal.userId }
        const after: ApiRecord = { ...before }
        for (const [key, value] of Object.entries(changes)) {
          const def = writableField(opened, key)
          const next = inLocale(opened, def, value, before[key])
          set[key] = writeValue(def, next)
          after[key] = readValue(def, set[key], opened.shape.kind)
        }
        assertInScope(opened.scope.rows, after, 'update')
        const updated = await opened.store.update(id, set, opened.scope.rows, Number(current._version))
        if (updated) {
          await emit('record.update', opened, before, fullRecord(opened.shape, updated))
          return { opened, row: updated }
        }
        // Another write landed between the read and the update.
        if (check) throw versionMismatch(check)
        if (attempt + 1 >= maxAttempts) throw new AppError('conflict', 'The record keeps changing; retry')
      }
    },

    /** Soft-deletes (or with `permanent`, removes, even an already soft-deleted row). Throws record_not_found, conflict. */
    async delete(principal: Principal, name: string, id: string, permanent: boolean): Promise<void> {
      const opened = await open(principal, name, 'delete')
      const current = await opened.store.byId(id, opened.scope.rows, permanent)
      if (!current) throw new AppError('record_not_found', 'Record not found')
      const before = fullRecord(opened.shape, current)
      await deps.hooks.run({ action: 'delete', collection: opened.collection, principal, before, data: {} })
      await cascadeDelete(deps, opened, id, permanent)
      if (permanent) {
        if (!(await opened.store.remove(id, opened.scope.rows))) throw new AppError('record_not_found', 'Record not found')
        await deps.shares.deleteOfRecord(opened.collection.id, id)
      } else {
        const set = { deleted_at: clock.seconds(), updated_at: clock.seconds(), updated_by: principal.userId }
        if (!(await opened.store.update(id, set, opened.scope.rows, null))) throw new AppError('record_not_found', 'Record not found')
      }
      await emit('record.delete', opened, before, null)
    },

    /** Brings a soft-deleted record back; missing, hidden and not-deleted are the same 404. */
    async restore(principal: Principal, name: string, id: string): Promise<void> {
      const opened = await open(principal, name, 'delete')
      const deleted = both(opened.scope.rows, comparePresence(['deleted_at'], 'not_null'))
      // Read first, so the event carries the record as it was (an update event always has a before); the
      // write is at that version, so the before is exact.
      const current = await opened.store.byId(id, deleted, true)
      if (!current) throw new AppError('record_not_found', 'Record not found')
      const set = { deleted_at: null, updated_at: clock.seconds(), updated_by: principal.userId }
      const restored = await opened.store.update(id, set, deleted, Number(current._version), true)
      if (!restored) throw new AppError('record_not_found', 'Record not found')
      await emit('record.update', opened, fullRecord(opened.shape, current), fullRecord(opened.shape, restored))
    },
  }
}

function versionMismatch(check: NonNullable<VersionCheck>): AppError {
  return check.onMismatch === 'precondition_failed'
    ? new AppError('precondition_failed', 'The record changed since that version (If-Match)', { expected: check.version })
    : new AppError('conflict', 'The record changed since that version', { expected: check.version })
}

export type Writer = ReturnType<typeof createWriter>
