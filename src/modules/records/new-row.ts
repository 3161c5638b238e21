import { AppError } from '../../lib/errors.js'
import { evaluateFilter } from '../../lib/filter/index.js'
import { newId } from '../../lib/ids.js'
import type { FieldDef } from '../collections/index.js'
import { fieldTypeOf } from '../collections/index.js'
import { alwaysReadable, writeValue } from './codec.js'
import type { Opened } from './context.js'
import type { ApiRecord } from './events.js'
import { fullRecord } from './present.js'
import type { Row } from './store.js'

// The checks every write path shares: one create (write.ts) and each line of an import (import.ts) store
// exactly the same row, or refuse it the same way.

const settable = new Set(['id', 'created_at', 'updated_at'])
const idPattern = /^[A-Za-z0-9_-]{1,64}$/

/** The field definition a body key writes; throws invalid_field for an unknown or computed field. */
export function writableField(opened: Opened, key: string): FieldDef {
  const def = opened.shape.byName.get(key)
  if (!def) throw new AppError('invalid_field', `Unknown field "${key.slice(0, 60)}"`, { field: key.slice(0, 60) })
  if (fieldTypeOf(def.type).computed)
    throw new AppError('invalid_field', `"${key}" is computed and cannot be written`, { field: key })
  return def
}

/** Refuses fields outside the caller's allowlist (403, naming them). */
export function assertAllowed(opened: Opened, keys: readonly string[]): void {
  const allow = opened.scope.fields
  if (!allow) return
  const refused = keys.filter((k) => !alwaysReadable.has(k) && !allow.includes(k))
  if (refused.length > 0)
    throw new AppError('forbidden', `You may not write ${refused.join(', ')}`, { fields: refused })
}

/** A translatable field written as a plain string lands in the request's locale, beside `current`'s others. */
export function inLocale(opened: Opened, def: FieldDef, value: unknown, current: unknown): unknown {
  if (!def.translatable || typeof value !== 'string') return value
  if (opened.locale === '*')
    throw new AppError('invalid_field', `"${def.name}" is translatable: send a locale → text map, or name one locale`, {
      field: def.name,
    })
  const map =
    current && typeof current === 'object' && !Array.isArray(current) ? { ...(current as Record<string, unknown>) } : {}
  return { ...map, [opened.locale]: value }
}

/** The stored record must stay inside the caller's rows for the action (a grant's item_filter, owner scoping). */
export function assertInScope(opened: Opened, record: ApiRecord, action: string): void {
  if (opened.scope.rows && !evaluateFilter(opened.scope.rows, record)) {
    throw new AppError('forbidden', `The record would be outside the rows you may ${action}`)
  }
}

function timestamp(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new AppError('invalid_field', `${field} must be Unix seconds`, { field })
  return value
}

/** A create's body, checked: the fields it writes and the system keys a privileged caller set. */
export interface CreateInput {
  data: ApiRecord
  system: Partial<Record<'id' | 'created_at' | 'updated_at', unknown>>
}

/**
 * Checks a create's body before the hooks see it: every key a writable field the caller may write.
 * Privileged callers (admin access) may set id, created_at and updated_at; for others those keys are
 * dropped. Throws invalid_field, forbidden.
 */
export function createInput(opened: Opened, body: Record<string, unknown>): CreateInput {
  const data: ApiRecord = {}
  const system: CreateInput['system'] = {}
  for (const key in body) {
    const value = body[key]
    if (settable.has(key)) {
      if (opened.scope.admin) system[key as 'id'] = value
    } else if (!alwaysReadable.has(key)) {
      writableField(opened, key)
      data[key] = value
    }
  }
  assertAllowed(opened, Object.keys(data))
  return { data, system }
}

/**
 * The row a create stores from the hooks' data, with defaults and the system columns; keys that name no
 * stored field are left out. Throws invalid_field, missing_field, forbidden (outside the caller's rows).
 */
export function newRow(
  opened: Opened,
  data: ApiRecord,
  system: CreateInput['system'],
  now: number,
): { row: Row; chosenId: boolean } {
  if (system.id !== undefined && (typeof system.id !== 'string' || !idPattern.test(system.id))) {
    throw new AppError('invalid_field', 'id must be 1-64 letters, digits, - or _', { field: 'id' })
  }
  const row: Row = {
    id: (system.id as string | undefined) ?? newId(),
    created_at: system.created_at === undefined ? now : timestamp(system.created_at, 'created_at'),
    updated_at: system.updated_at === undefined ? now : timestamp(system.updated_at, 'updated_at'),
    created_by: opened.principal.userId,
    updated_by: opened.principal.userId,
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
  assertInScope(opened, fullRecord(opened.shape, row), 'create')
  return { row, chosenId: system.id !== undefined }
}
