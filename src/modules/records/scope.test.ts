import { testPrincipal } from '../../../test/support/principals.js'
import { describe, expect, it } from 'vitest'
import { evaluateFilter, parseFilter, resolveVariables, type ResolvedFilterNode } from '../../lib/filter/index.js'
import type { Principal } from '../../lib/principal.js'
import type { ResolvedDecision } from '../access/index.js'
import { recordScope, shareCovers, type AccessPreset, type ShareAccess } from './scope.js'

// `recordScope` is pure: principals, decisions and records are built by hand, and the row filter it
// returns is judged by evaluating it on sample records, as realtime and capability tokens do.

const me = 'u_me'
const other = 'u_other'

const user: Principal = testPrincipal({ userId: me })
const anonymous: Principal = {
  ...user,
  kind: 'anonymous',
  userId: null,
  roleId: null,
  roleName: 'public',
  sessionId: null,
  sessionExpiresAt: null,
}

/** The records every row is judged on. owned_by null means the owner is created_by. */
const records = {
  mineCreated: { id: 'mine_created', created_by: me, owned_by: null, status: 'open' },
  mineTransferred: { id: 'mine_transferred', created_by: other, owned_by: me, status: 'closed' },
  othersCreated: { id: 'others_created', created_by: other, owned_by: null, status: 'open' },
  // Created by me but handed to someone else: no longer mine.
  transferredAway: { id: 'transferred_away', created_by: me, owned_by: other, status: 'open' },
  sharedWithMe: { id: 'shared_with_me', created_by: other, owned_by: null, status: 'closed' },
  anonymousMade: { id: 'anonymous_made', created_by: null, owned_by: null, status: 'open' },
} as const
type Sample = keyof typeof records
const all = Object.keys(records) as Sample[]

const resolve = (filter: unknown): ResolvedFilterNode =>
  resolveVariables(parseFilter(filter), { userId: me, role: 'custom', projectId: 'p1', now: 1_800_000_000 })

const deny: ResolvedDecision = { allowed: false, itemFilter: null, fields: null }
const every: ResolvedDecision = { allowed: true, itemFilter: null, fields: null }
const openOnly: ResolvedDecision = { allowed: true, itemFilter: resolve({ status: { _eq: 'open' } }), fields: null }
const titleOnly: ResolvedDecision = { allowed: true, itemFilter: null, fields: ['title'] }
const openTitleOnly: ResolvedDecision = { ...openOnly, fields: ['title'] }

interface Row {
  name: string
  preset: AccessPreset
  action: 'read' | 'create' | 'update' | 'delete'
  decision: ResolvedDecision
  as?: Principal
  admin?: boolean
  sharing?: boolean
  sharedIds?: string[]
  /** false: refused; otherwise the sample records the row filter lets through. */
  sees: false | Sample[]
  fields?: string[] | null
}

const shared = ['shared_with_me']
const owned: Sample[] = ['mineCreated', 'mineTransferred']

const rows: Row[] = [
  // team: the role's grants alone decide.
  { name: 'team, no grant', preset: 'team', action: 'read', decision: deny, sees: false },
  { name: 'team, unrestricted grant', preset: 'team', action: 'read', decision: every, sees: all },
  {
    name: 'team, item_filter grant',
    preset: 'team',
    action: 'read',
    decision: openOnly,
    sees: ['mineCreated', 'othersCreated', 'transferredAway', 'anonymousMade'],
  },
  { name: 'team, fields allowlist', preset: 'team', action: 'read', decision: titleOnly, sees: all, fields: ['title'] },
  {
    name: 'team, filter and allowlist together',
    preset: 'team',
    action: 'read',
    decision: openTitleOnly,
    sees: ['mineCreated', 'othersCreated', 'transferredAway', 'anonymousMade'],
    fields: ['title'],
  },
  { name: 'team, create with grant', preset: 'team', action: 'create', decision: every, sees: all },
  { name: 'team, create without grant', preset: 'team', action: 'create', decision: deny, sees: false },
  {
    name: 'team, update with item_filter',
    preset: 'team',
    action: 'update',
    decision: openOnly,
    sees: ['mineCreated', 'othersCreated', 'transferredAway', 'anonymousMade'],
  },
  { name: 'team, delete without grant', preset: 'team', action: 'delete', decision: deny, sees: false },
  {
    name: 'team, admin is not narrowed either',
    preset: 'team',
    action: 'delete',
    decision: every,
    admin: true,
    sees: all,
  },
  {
    name: 'team, anonymous with a public grant',
    preset: 'team',
    action: 'read',
    decision: every,
    as: anonymous,
    sees: all,
  },
  { name: 'team, anonymous without grant', preset: 'team', action: 'read', decision: deny, as: anonymous, sees: false },
  // team with sharing: a shared record is reachable grant or not.
  {
    name: 'team, shared, no grant',
    preset: 'team',
    action: 'read',
    decision: deny,
    sharing: true,
    sharedIds: shared,
    sees: ['sharedWithMe'],
    fields: null,
  },
  {
    name: 'team, shared, item_filter grant',
    preset: 'team',
    action: 'read',
    decision: openOnly,
    sharing: true,
    sharedIds: shared,
    sees: ['mineCreated', 'othersCreated', 'transferredAway', 'sharedWithMe', 'anonymousMade'],
  },
  {
    name: 'team, shared, unrestricted grant',
    preset: 'team',
    action: 'read',
    decision: every,
    sharing: true,
    sharedIds: shared,
    sees: all,
  },
  {
    name: 'team, shared for update (edit), no grant',
    preset: 'team',
    action: 'update',
    decision: deny,
    sharing: true,
    sharedIds: shared,
    sees: ['sharedWithMe'],
  },
  {
    name: 'team, shares ignored while sharing is off',
    preset: 'team',
    action: 'read',
    decision: openOnly,
    sharing: false,
    sharedIds: shared,
    sees: ['mineCreated', 'othersCreated', 'transferredAway', 'anonymousMade'],
  },
  {
    name: 'team, shares ignored while sharing is off, no grant',
    preset: 'team',
    action: 'read',
    decision: deny,
    sharing: false,
    sharedIds: shared,
    sees: false,
  },
  {
    name: 'team, sharing on but nothing shared, no grant',
    preset: 'team',
    action: 'read',
    decision: deny,
    sharing: true,
    sharedIds: [],
    sees: false,
  },
  {
    name: 'team, shared with a fields grant keeps the allowlist',
    preset: 'team',
    action: 'read',
    decision: openTitleOnly,
    sharing: true,
    sharedIds: shared,
    sees: ['mineCreated', 'othersCreated', 'transferredAway', 'sharedWithMe', 'anonymousMade'],
    fields: ['title'],
  },

  // private: the grants, narrowed to what the caller effectively owns (owned_by, else created_by).
  { name: 'private, unrestricted grant', preset: 'private', action: 'read', decision: every, sees: owned },
  { name: 'private, item_filter grant', preset: 'private', action: 'read', decision: openOnly, sees: ['mineCreated'] },
  {
    name: 'private, fields allowlist',
    preset: 'private',
    action: 'read',
    decision: titleOnly,
    sees: owned,
    fields: ['title'],
  },
  { name: 'private, no grant', preset: 'private', action: 'read', decision: deny, sees: false },
  { name: 'private, admin sees all', preset: 'private', action: 'read', decision: every, admin: true, sees: all },
  {
    name: 'private, admin keeps a filter but is not narrowed',
    preset: 'private',
    action: 'read',
    decision: openOnly,
    admin: true,
    sees: ['mineCreated', 'othersCreated', 'transferredAway', 'anonymousMade'],
  },
  { name: 'private, create', preset: 'private', action: 'create', decision: every, sees: owned },
  { name: 'private, create without grant', preset: 'private', action: 'create', decision: deny, sees: false },
  { name: 'private, update', preset: 'private', action: 'update', decision: every, sees: owned },
  { name: 'private, delete', preset: 'private', action: 'delete', decision: every, sees: owned },
  { name: 'private, delete as admin', preset: 'private', action: 'delete', decision: every, admin: true, sees: all },
  {
    name: 'private, anonymous even with a grant',
    preset: 'private',
    action: 'read',
    decision: every,
    as: anonymous,
    sees: false,
  },
  {
    name: 'private, anonymous create even with a grant',
    preset: 'private',
    action: 'create',
    decision: every,
    as: anonymous,
    sees: false,
  },
  {
    name: 'private, shared, no grant',
    preset: 'private',
    action: 'read',
    decision: deny,
    sharing: true,
    sharedIds: shared,
    sees: ['sharedWithMe'],
    fields: null,
  },
  {
    name: 'private, shared, with grant',
    preset: 'private',
    action: 'read',
    decision: every,
    sharing: true,
    sharedIds: shared,
    sees: [...owned, 'sharedWithMe'],
  },
  {
    name: 'private, shared, item_filter grant',
    preset: 'private',
    action: 'read',
    decision: openOnly,
    sharing: true,
    sharedIds: shared,
    sees: ['mineCreated', 'sharedWithMe'],
  },
  {
    name: 'private, shared for update (edit)',
    preset: 'private',
    action: 'update',
    decision: every,
    sharing: true,
    sharedIds: shared,
    sees: [...owned, 'sharedWithMe'],
  },
  {
    name: 'private, shares ignored while sharing is off',
    preset: 'private',
    action: 'read',
    decision: every,
    sharing: false,
    sharedIds: shared,
    sees: owned,
  },
  {
    name: 'private, shares ignored while sharing is off, no grant',
    preset: 'private',
    action: 'read',
    decision: deny,
    sharing: false,
    sharedIds: shared,
    sees: false,
  },
  {
    name: 'private, admin with shares still sees all',
    preset: 'private',
    action: 'read',
    decision: every,
    admin: true,
    sharing: true,
    sharedIds: shared,
    sees: all,
  },

  // public: anyone reads every record; writes follow the grants.
  {
    name: 'public, anonymous read without grant',
    preset: 'public',
    action: 'read',
    decision: deny,
    as: anonymous,
    sees: all,
    fields: null,
  },
  {
    name: 'public, signed-in read without grant',
    preset: 'public',
    action: 'read',
    decision: deny,
    sees: all,
    fields: null,
  },
  {
    name: 'public, item_filter grant does not narrow reads',
    preset: 'public',
    action: 'read',
    decision: openOnly,
    sees: all,
  },
  {
    name: 'public, a grant allowlist still applies to reads',
    preset: 'public',
    action: 'read',
    decision: titleOnly,
    sees: all,
    fields: ['title'],
  },
  { name: 'public, anonymous create', preset: 'public', action: 'create', decision: deny, as: anonymous, sees: false },
  { name: 'public, anonymous update', preset: 'public', action: 'update', decision: deny, as: anonymous, sees: false },
  { name: 'public, anonymous delete', preset: 'public', action: 'delete', decision: deny, as: anonymous, sees: false },
  { name: 'public, signed-in update without grant', preset: 'public', action: 'update', decision: deny, sees: false },
  {
    name: 'public, update with item_filter grant',
    preset: 'public',
    action: 'update',
    decision: openOnly,
    sees: ['mineCreated', 'othersCreated', 'transferredAway', 'anonymousMade'],
  },
  {
    name: 'public, delete with allowlisted grant',
    preset: 'public',
    action: 'delete',
    decision: titleOnly,
    sees: all,
    fields: ['title'],
  },
  {
    name: 'public, shared for update, no grant',
    preset: 'public',
    action: 'update',
    decision: deny,
    sharing: true,
    sharedIds: shared,
    sees: ['sharedWithMe'],
  },
]

describe('recordScope', () => {
  it.each(rows)('$name ($action)', (row) => {
    const scope = recordScope({
      principal: row.as ?? user,
      action: row.action,
      decision: row.decision,
      preset: row.preset,
      sharing: row.sharing ?? false,
      admin: row.admin ?? false,
      sharedIds: row.sharedIds ?? [],
    })
    expect(Object.isFrozen(scope)).toBe(true)
    if (row.sees === false) {
      expect(scope.allowed).toBe(false)
      return
    }
    expect(scope.allowed).toBe(true)
    const reached = all.filter((key) => scope.rows === null || evaluateFilter(scope.rows, records[key]))
    expect(reached.sort()).toEqual([...row.sees].sort())
    // Only a filter that lets everything through may be left out; a narrowing must be explicit.
    if (row.sees.length < all.length) expect(scope.rows).not.toBeNull()
    expect(scope.fields).toEqual(row.fields === undefined ? row.decision.fields : row.fields)
  })
})

describe('recordScope on a record about to be created', () => {
  // What write.ts checks before inserting: the new record must lie inside the create scope.
  const fresh = (createdBy: string | null) => ({ id: 'new', created_by: createdBy, owned_by: null, status: 'open' })
  const scopeOf = (preset: AccessPreset, decision: ResolvedDecision, principal = user) =>
    recordScope({ principal, action: 'create', decision, preset, sharing: true, admin: false, sharedIds: shared })

  it('private: the creator is the owner, so a record they create is inside their scope', () => {
    const scope = scopeOf('private', every)
    expect(scope.rows && evaluateFilter(scope.rows, fresh(me))).toBe(true)
    expect(scope.rows && evaluateFilter(scope.rows, fresh(other))).toBe(false)
  })

  it('team: an item_filter on the create grant admits only matching values', () => {
    const scope = scopeOf('team', openOnly)
    expect(scope.rows && evaluateFilter(scope.rows, fresh(me))).toBe(true)
    expect(scope.rows && evaluateFilter(scope.rows, { ...fresh(me), status: 'closed' })).toBe(false)
  })
})

describe('shareCovers', () => {
  const table: [ShareAccess, string, boolean][] = [
    ['view', 'read', true],
    ['comment', 'read', true],
    ['edit', 'read', true],
    ['view', 'update', false],
    ['comment', 'update', false],
    ['edit', 'update', true],
    ['edit', 'delete', false],
    ['edit', 'create', false],
    ['edit', 'transfer', false],
    ['edit', 'view_deleted', false],
  ]
  it.each(table)('%s covers %s: %s', (access, action, covered) => {
    expect(shareCovers(access, action)).toBe(covered)
  })
})
