import {
  andNode,
  compareList,
  comparePresence,
  compareValue,
  literal,
  orNode,
  type LiteralOperand,
  type ResolvedFilterNode,
} from '../../lib/filter/index.js'
import type { Principal } from '../../lib/principal.js'
import type { ResolvedDecision } from '../access/index.js'

export type AccessPreset = 'private' | 'team' | 'public'
export type ShareAccess = 'view' | 'comment' | 'edit'

/** What a caller may do to a collection's records for one action. */
export interface RecordScope {
  readonly allowed: boolean
  /** The rows reachable, as a filter (null: every row). Meaningless when not allowed. */
  readonly rows: ResolvedFilterNode | null
  /** The columns readable or writable (null: all). */
  readonly fields: readonly string[] | null
}

export interface ScopeInput {
  principal: Principal
  action: string
  /** The role decision for `collections/<name>:<action>`. */
  decision: ResolvedDecision
  preset: AccessPreset
  sharing: boolean
  /** The caller is a super_admin or holds admin access in the project. */
  admin: boolean
  /** Ids of this collection's records shared with the caller at an access that covers the action. */
  sharedIds: readonly string[]
}

const denied: RecordScope = Object.freeze({ allowed: false, rows: null, fields: null })

/** Which share levels grant an action: view and comment read, edit also updates. */
export function shareCovers(access: ShareAccess, action: string): boolean {
  if (action === 'read') return true
  return action === 'update' && access === 'edit'
}

/**
 * Combines the role decision with the collection's access preset (addendum §4) into one row filter, so the
 * same value compiles into SQL and evaluates in memory (realtime, capability tokens):
 * - team: the role's grants alone decide;
 * - private: the grants, further narrowed to records the caller effectively owns (`owned_by`, else
 *   `created_by`); administrators are not narrowed;
 * - public: anyone, anonymous callers included, reads every record;
 * - sharing: a record shared with the caller is reachable for what the share covers, grant or not.
 */
export function recordScope(input: ScopeInput): RecordScope {
  const { principal, decision, preset, action } = input
  if (preset === 'public' && action === 'read')
    return Object.freeze({ allowed: true, rows: null, fields: decision.allowed ? decision.fields : null })

  let rows: ResolvedFilterNode | null | 'none' = decision.allowed ? decision.itemFilter : 'none'
  if (rows !== 'none' && preset === 'private' && !input.admin) {
    const me = principal.userId
    if (me === null) rows = 'none'
    else {
      const owned = orNode<LiteralOperand>([
        compareValue(['owned_by'], 'eq', literal(me)),
        andNode<LiteralOperand>([
          comparePresence(['owned_by'], 'is_null'),
          compareValue(['created_by'], 'eq', literal(me)),
        ]),
      ])
      rows = rows === null ? owned : andNode([rows, owned])
    }
  }
  const shared =
    input.sharing && input.sharedIds.length > 0 ? compareList(['id'], 'in', input.sharedIds.map(literal)) : null
  if (shared) rows = rows === 'none' ? shared : rows === null ? null : orNode([rows, shared])
  if (rows === 'none') return denied
  return Object.freeze({ allowed: true, rows, fields: decision.allowed ? decision.fields : null })
}

/** What two scopes both reach: allowed by both, rows in both (AND; null is every row), columns in both (null is all). */
export function intersectScopes(a: RecordScope, b: RecordScope): RecordScope {
  if (!a.allowed || !b.allowed) return denied
  const rows = a.rows === null ? b.rows : b.rows === null ? a.rows : andNode([a.rows, b.rows])
  const fields =
    a.fields === null ? b.fields : b.fields === null ? a.fields : a.fields.filter((f) => b.fields!.includes(f))
  return Object.freeze({ allowed: true, rows, fields })
}
