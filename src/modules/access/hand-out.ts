import { isDeepStrictEqual } from 'node:util'
import type { FilterNode } from '../../lib/filter/index.js'
import type { CompiledGrant, Decision } from './decide.js'

/** Why a grant reaches beyond what its giver holds, or null when it does not. */
export type HandOutRefusal = 'permission' | 'rows' | 'fields' | null

/**
 * Whether a caller whose own decision for the grant's permission is `held` may hand the grant out: it
 * must hold the permission, on no more rows (the same filter, or one of the filters it holds; anything
 * when it holds every row) and on no more columns (a subset of its allowlist; anything when it has none).
 * Filters are compared as written, not by meaning: a narrower but different filter is refused too.
 */
export function handOutRefusal(grant: CompiledGrant, held: Decision): HandOutRefusal {
  if (!held.allowed) return 'permission'
  if (!rowsWithin(grant.itemFilter, held.itemFilter)) return 'rows'
  if (held.fields !== null && (grant.fields === null || !grant.fields.every((f) => held.fields!.includes(f))))
    return 'fields'
  return null
}

function rowsWithin(granted: FilterNode | null, held: FilterNode | null): boolean {
  if (held === null) return true
  if (granted === null) return false
  if (isDeepStrictEqual(granted, held)) return true
  return held.kind === 'or' && held.items.some((item) => isDeepStrictEqual(granted, item))
}
