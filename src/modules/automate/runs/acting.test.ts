import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { principals, type Principal } from '../../../lib/principal.js'
import type { Role } from '../../access/index.js'
import type { FlowForRun, TriggerInput } from '../model.js'
import { DelegationRevoked, principalOf, resolveActing } from './acting.js'

const users = new Map([
  ['owner', { id: 'owner', project_id: 'p1', role_id: 'r-editor', email: 'owner@example.com', banned: false }],
  ['alice', { id: 'alice', project_id: 'p1', role_id: 'r-viewer', email: 'alice@example.com', banned: false }],
  ['pub', { id: 'pub', project_id: 'p1', role_id: 'r-admin', email: 'pub@example.com', banned: false }],
  ['demoted', { id: 'demoted', project_id: 'p1', role_id: 'r-viewer', email: null, banned: false }],
  ['banned', { id: 'banned', project_id: 'p1', role_id: 'r-admin', email: null, banned: true }],
])
const roles = new Map([
  ['r-admin', { id: 'r-admin', name: 'admin' }],
  ['r-editor', { id: 'r-editor', name: 'editor' }],
  ['r-viewer', { id: 'r-viewer', name: 'viewer' }],
])
const isAdmin = (p: Principal) => p.roleId === 'r-admin'
// Administrators may delegate anything; everyone else nothing (the real rules are access's, tested there).
const deps = {
  users: { findRow: async (id: string) => users.get(id) ?? null },
  access: {
    roleById: async (_projectId: string, id: string) => (roles.get(id) ?? null) as Role | null,
    listRoles: async () => [],
    hasAdminAccess: async (p: Principal) => isAdmin(p),
    authorize: async (p: Principal, permission: string) => {
      if (!isAdmin(p)) throw new AppError('forbidden', `Missing permission ${permission}`)
    },
    assertMayAssign: async (p: Principal) => {
      if (!isAdmin(p)) throw new AppError('forbidden', 'beyond reach')
    },
  },
  apiKeys: { findApiKey: async () => null },
}
const flow = { id: 'f1', projectId: 'p1', createdBy: 'owner', publishedBy: 'pub' } as FlowForRun
const trigger = (type: TriggerInput['type']): TriggerInput => ({
  type,
  event: null,
  collection: null,
  method: null,
  body: {},
})
const alice = principals.user(
  { homeProjectId: 'p1', userId: 'alice', roleId: 'r-viewer', roleName: 'viewer', superAdmin: false },
  { id: 's1', expiresAt: 2e9 },
)
const alicesKey = principals.apiKey(
  { id: 'k1', capabilities: ['collections/*:read'] },
  { homeProjectId: 'p1', userId: 'alice', roleId: 'r-viewer', roleName: 'api', superAdmin: false },
)
const serviceKey = principals.serviceKey({ id: 'k2', projectId: 'p1', capabilities: ['collections/notes:read'] })

type Row = [string, Parameters<typeof resolveActing>[2], TriggerInput, Principal | null, Record<string, unknown>]

describe('resolveActing (run-identity.ts decides, this builds)', () => {
  const rows: Row[] = [
    [
      'triggering_user: the initiator, never beyond the publisher',
      'triggering_user',
      trigger('manual'),
      alice,
      { kind: 'user', userId: 'alice', roleName: 'viewer', ceiling: { userId: 'pub', ceiling: null } },
    ],
    [
      'triggering_user, a webhook (nobody): the anonymous caller, never beyond the publisher',
      'triggering_user',
      trigger('webhook'),
      null,
      { kind: 'anonymous', roleName: 'public', ceiling: { userId: 'pub' } },
    ],
    [
      'triggering_user, a schedule: the publisher',
      'triggering_user',
      trigger('schedule'),
      null,
      { kind: 'user', userId: 'pub', roleName: 'admin', ceiling: null },
    ],
    // A system write (a repair, a sweep) must never lend a flow its unlimited reach.
    [
      'triggering_user, a write Plinth made itself: the publisher, never system',
      'triggering_user',
      trigger('event_action'),
      principals.system('p1', 'structure.repair'),
      { kind: 'user', userId: 'pub', ceiling: null },
    ],
    [
      'flow_owner: the creator with their role, a delegation (not capped)',
      'flow_owner',
      trigger('manual'),
      alice,
      { kind: 'user', userId: 'owner', roleName: 'editor', ceiling: null },
    ],
    [
      'role:<id>: the initiator holding that role',
      'role:r-editor',
      trigger('manual'),
      alice,
      { kind: 'user', userId: 'alice', roleName: 'editor', ceiling: null },
    ],
    [
      "role:<id> set off by a key: the key's person holding the role, within the key's capabilities",
      'role:r-editor',
      trigger('manual'),
      alicesKey,
      { kind: 'api_key', userId: 'alice', roleId: 'r-editor', capabilities: ['collections/*:read'] },
    ],
    [
      'role:<id> set off by a service key: the publisher holding the role, within the key',
      'role:r-editor',
      trigger('manual'),
      serviceKey,
      {
        kind: 'user',
        userId: 'pub',
        roleId: 'r-editor',
        ceiling: { kind: 'api_key', userId: null, capabilities: ['collections/notes:read'] },
      },
    ],
    [
      'role:<id> on a schedule: the publisher holding the role',
      'role:r-editor',
      trigger('schedule'),
      null,
      { kind: 'user', userId: 'pub', roleId: 'r-editor', ceiling: null },
    ],
  ]
  it.each(rows)('%s', async (_name, runAs, input, initiator, expected) => {
    expect(await resolveActing(deps, flow, runAs, input, initiator)).toMatchObject(expected)
  })

  it('an initiator already capped (a run that set this one off) keeps its ceilings, the publisher below them', async () => {
    const capped = principals.capped(
      alice,
      principals.capability({
        homeProjectId: 'p1',
        userId: 'owner',
        roleId: 'r-editor',
        roleName: 'editor',
        superAdmin: false,
      }),
    )
    const acting = await resolveActing(deps, flow, 'triggering_user', trigger('event_action'), capped)
    expect(acting).toMatchObject({
      userId: 'alice',
      ceiling: { userId: 'owner', ceiling: { userId: 'pub', ceiling: null } },
    })
    const principal = principalOf(acting)
    expect(principal.ceiling?.userId).toBe('owner')
    expect(principal.ceiling?.ceiling?.userId).toBe('pub')
  })

  it('a run never starts for a publisher who can no longer act, or who may no longer delegate', async () => {
    const cases: [Partial<FlowForRun>, Parameters<typeof resolveActing>[2], TriggerInput['type']][] = [
      [{ publishedBy: 'gone' }, 'triggering_user', 'schedule'],
      [{ publishedBy: 'banned' }, 'triggering_user', 'manual'],
      [{ publishedBy: null }, 'triggering_user', 'webhook'],
      [{ publishedBy: 'demoted' }, 'flow_owner', 'manual'],
      [{ publishedBy: 'demoted' }, 'role:r-editor', 'schedule'],
      [{}, 'role:gone', 'manual'],
    ]
    for (const [change, runAs, type] of cases) {
      await expect(
        resolveActing(deps, { ...flow, ...change }, runAs, trigger(type), type === 'manual' ? alice : null),
      ).rejects.toBeInstanceOf(DelegationRevoked)
    }
  })

  it('a system-managed flow acts as the system, whoever set it off (a schedule, an admin by hand)', async () => {
    const managed = { ...flow, createdBy: null, publishedBy: null, system: true }
    for (const initiator of [null, alice]) {
      const acting = await resolveActing(
        deps,
        managed,
        'triggering_user',
        trigger(initiator ? 'manual' : 'schedule'),
        initiator,
      )
      expect(acting).toMatchObject({ kind: 'system', projectId: 'p1', userId: null, roleName: 'system' })
      expect(principalOf(acting)).toMatchObject({ kind: 'system', projectId: 'p1', reason: 'automate.run' })
    }
  })
})
