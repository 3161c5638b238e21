import { AppError, isAppError } from '../../lib/errors.js'
import { checkFilterBounds, matchNone, parseFilter, type FilterNode } from '../../lib/filter/index.js'
import { newId } from '../../lib/ids.js'
import type { GrantSpec } from './built-in-roles.js'
import type { CompiledGrant } from './decide.js'
import { actions, isResource } from './permission.js'
import { isKnownResource, knownResourceForms } from './resources.js'
import type { GrantRow, RoleRow } from './store.js'

/** Roles and grants on the wire, and their checked, compiled forms. */

export interface Role {
  id: string
  name: string
  description: string
  adminAccess: boolean
  builtIn: boolean
  createdAt: number
  updatedAt: number
}

export interface GrantInput {
  resource: string
  action: string
  item_filter?: unknown
  fields?: string[] | null
}

export interface Grant {
  resource: string
  action: string
  item_filter: unknown
  fields: string[] | null
}

const fieldName = /^[a-z_][a-z0-9_]{0,63}$/i

export interface CompiledInput extends CompiledGrant {
  readonly rawFilter: unknown
}

/** Validates one grant as sent (or as seeded). Throws invalid_request, or validation_error for the filter. */
export function compileInput(grant: GrantInput | GrantSpec, index: number): CompiledInput {
  if (typeof grant.resource !== 'string' || !isResource(grant.resource)) {
    throw new AppError('invalid_request', `grants[${index}].resource is not a resource pattern`, { index })
  }
  if (!isKnownResource(grant.resource)) {
    throw new AppError(
      'invalid_request',
      `grants[${index}].resource "${grant.resource}" names no resource Plinth knows (${knownResourceForms})`,
      {
        index,
        resource: grant.resource,
      },
    )
  }
  if (!(actions as readonly string[]).includes(grant.action)) {
    throw new AppError('invalid_request', `grants[${index}].action must be one of ${actions.join(', ')}`, { index })
  }
  const raw = grant.item_filter ?? null
  let itemFilter: FilterNode | null = null
  if (raw !== null) {
    try {
      itemFilter = parseFilter(raw)
    } catch (err) {
      if (isAppError(err))
        throw new AppError('validation_error', `grants[${index}].item_filter: ${err.message}`, {
          index,
          ...err.details,
        })
      throw err
    }
  }
  const fields = grant.fields ?? null
  if (
    fields !== null &&
    (!Array.isArray(fields) || fields.length > 500 || !fields.every((f) => typeof f === 'string' && fieldName.test(f)))
  ) {
    throw new AppError('invalid_request', `grants[${index}].fields must be a list of field names`, { index })
  }
  return {
    resource: grant.resource,
    action: grant.action,
    itemFilter,
    fields: fields ? [...fields] : null,
    rawFilter: raw,
  }
}

export function toGrantRow(roleId: string, position: number, g: CompiledInput): GrantRow {
  return {
    id: newId(),
    role_id: roleId,
    position,
    resource: g.resource,
    action: g.action,
    item_filter: g.rawFilter === null ? null : JSON.stringify(g.rawFilter),
    fields: g.fields ? JSON.stringify(g.fields) : null,
  }
}

/**
 * A stored grant, compiled for decisions. A row filter the parser now refuses (saved before a limit
 * existed, or written around the API) matches no row, fail closed, and `unusable` hears why: one broken
 * grant must not stop the project's roles from loading, which would refuse every request in the project.
 */
export function compileStored(row: GrantRow, unusable?: (reason: string) => void): CompiledGrant {
  return Object.freeze({
    id: row.id,
    resource: row.resource,
    action: row.action,
    itemFilter: row.item_filter === null ? null : storedFilter(row.item_filter, unusable),
    fields: row.fields === null ? null : (JSON.parse(row.fields) as string[]),
  })
}

function storedFilter(text: string, unusable?: (reason: string) => void): FilterNode {
  try {
    return parseFilter(JSON.parse(text))
  } catch (err) {
    unusable?.(err instanceof Error ? err.message : String(err))
    return matchNone()
  }
}

/**
 * A stored grant as the API shows it. A row filter beyond the filter bounds (thousands of levels deep) is
 * shown as `{ "_invalid": reason }`: writing it out would overflow JSON.stringify, and the marker is no
 * filter, so saving the role back as shown is refused instead of widening the grant.
 */
export function toWireGrant(row: GrantRow): Grant {
  return {
    resource: row.resource,
    action: row.action,
    item_filter: row.item_filter === null ? null : wireFilter(row.item_filter),
    fields: row.fields === null ? null : (JSON.parse(row.fields) as string[]),
  }
}

function wireFilter(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text)
    checkFilterBounds(value, 'item_filter')
    return value
  } catch (err) {
    return { _invalid: err instanceof Error ? err.message : String(err) }
  }
}

export function toRole(row: RoleRow): Role {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    adminAccess: Boolean(row.admin_access),
    builtIn: Boolean(row.built_in),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

export function stripRules(role: Role): Role {
  return {
    id: role.id,
    name: role.name,
    description: role.description,
    adminAccess: role.adminAccess,
    builtIn: role.builtIn,
    createdAt: role.createdAt,
    updatedAt: role.updatedAt,
  }
}
