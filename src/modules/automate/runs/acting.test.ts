import { describe, expect, it } from 'vitest'
import { principals } from '../../../lib/principal.js'
import type { FlowForRun, TriggerInput } from '../model.js'
import { principalOf, resolveActing } from './acting.js'

const users = new Map([
  ['owner', { id: 'owner', project_id: 'p1', role_id: 'r-editor', email: 'owner@example.com', banned: false }],
  ['alice', { id: 'alice', project_id: 'p1', role_id: 'r-viewer', email: 'alice@example.com', banned: false }],
])
const roles = new Map([
  ['r-editor', { id: 'r-editor', name: 'editor' }],
  ['r-viewer', { id: 'r-viewer', name: 'viewer' }],
])
const deps = {
  users: { findRow: async (id: string) => users.get(id) ?? null },
  access: { roleById: async (_projectId: string, id: string) => roles.get(id) ?? null },
}
const flow = { id: 'f1', projectId: 'p1', createdBy: 'owner' } as FlowForRun
const trigger = (type: TriggerInput['type']): TriggerInput => ({ type, event: null, collection: null, method: null, body: {} })
const alice = principals.user({ homeProjectId: 'p1', userId: 'alice', roleId: 'r-viewer', roleName: 'viewer', superAdmin: false }, { id: 's1', expiresAt: 2e9 })

describe('resolveActing', () => {
  const rows: [string, Parameters<typeof resolveActing>[2], TriggerInput, Parameters<typeof resolveActing>[4], { kind: string; userId: string | null; roleName: string }][] = [
    ['triggering_user: the initiator as they are', 'triggering_user', trigger('manual'), alice, { kind: 'user', userId: 'alice', roleName: 'viewer' }],
    ['triggering_user, a webhook (nobody): the anonymous caller', 'triggering_user', trigger('webhook'), null, { kind: 'anonymous', userId: null, roleName: 'public' }],
    ['triggering_user, a schedule: the owner', 'triggering_user', trigger('schedule'), null, { kind: 'user', userId: 'owner', roleName: 'editor' }],
    // A system write (a repair, a sweep) must never lend a flow its unlimited reach.
    ['triggering_user, a write Plinth made itself: the owner, never system', 'triggering_user', trigger('event_action'), principals.system('p1', 'structure.repair'), { kind: 'user', userId: 'owner', roleName: 'editor' }],
    ['flow_owner: the creator with their role', 'flow_owner', trigger('manual'), alice, { kind: 'user', userId: 'owner', roleName: 'editor' }],
    ['role:<id>: the initiator holding that role', 'role:r-editor', trigger('manual'), alice, { kind: 'user', userId: 'alice', roleName: 'editor' }],
    ['role:<id> that no longer exists: anonymous', 'role:gone', trigger('manual'), alice, { kind: 'anonymous', userId: null, roleName: 'public' }],
  ]
  it.each(rows)('%s', async (_name, runAs, input, initiator, expected) => {
    expect(await resolveActing(deps, flow, runAs, input, initiator)).toMatchObject(expected)
  })

  it('a system-managed flow acts as the system, whoever set it off (a schedule, an admin by hand)', async () => {
    const managed = { ...flow, createdBy: null, system: true }
    for (const initiator of [null, alice]) {
      const acting = await resolveActing(deps, managed, 'triggering_user', trigger(initiator ? 'manual' : 'schedule'), initiator)
      expect(acting).toMatchObject({ kind: 'system', projectId: 'p1', userId: null, roleName: 'system' })
      expect(principalOf(acting)).toMatchObject({ kind: 'system', projectId: 'p1', reason: 'automate.run' })
    }
  })

  it('an owner who was deleted leaves a schedule acting as the anonymous caller', async () => {
    expect(await resolveActing(deps, { ...flow, createdBy: 'nobody' }, 'triggering_user', trigger('schedule'), null)).toMatchObject({ kind: 'anonymous' })
  })
})
