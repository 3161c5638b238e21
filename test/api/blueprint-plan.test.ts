import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isAppError } from '../../src/lib/errors.js'
import type { Principal } from '../../src/lib/principal.js'
import { readBlueprint } from '../../src/modules/blueprints/document/read.js'
import { brick, documentOf } from '../../src/modules/blueprints/document/test-document.js'
import { planBlueprint, type PlanInput } from '../../src/modules/blueprints/plan/planner.js'
import { brickProviders } from '../../src/modules/blueprints/providers/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, sessionPrincipal, signUpOwner, type Account } from '../support/identity.js'

/**
 * The blueprint planner (issue 30 item 4, first part: no ledger yet, so no baseline): verdicts from the live
 * project as the caller reads it, the calls that would apply them in dependency order, BLOCKED reasons, and
 * the round trip: resources made by hand from a document plan as ADOPT with no changed path. Plan writes
 * nothing. Runs on PostgreSQL with TEST_DATABASE_URL.
 */

let server: TestServer
let owner: Account
let ownerActor: Principal
let viewerActor: Principal
let prefix = ''

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  ownerActor = await sessionPrincipal(server, owner.token, owner, true)
  viewerActor = await sessionPrincipal(
    server,
    owner.token,
    await createAccount(server, owner.token, { role: 'viewer' }),
  )
  prefix = `p${Math.random().toString(36).slice(2, 8)}`
})
afterAll(async () => {
  await server?.stop()
})

const plan = (source: string, input: PlanInput = {}, actor = ownerActor) =>
  planBlueprint(brickProviders(server.app.services), actor, readBlueprint(source), {
    params: { prefix },
    ...input,
  })

/** A small app: a collection, its access, a role and its grants, seed rows, a view, a nav item, a webhook. */
const app = () =>
  documentOf([
    brick('collection id=tickets', {
      name: '${params.prefix}_tickets',
      accessPreset: 'private',
      fields: [
        { name: 'title', type: 'text', required: true, unique: false, indexed: false },
        { name: 'slug', type: 'text', required: false, unique: false, indexed: true },
      ],
    }),
    brick('access id=tickets-access needs=tickets', {
      collection: '${params.prefix}_tickets',
      accessControl: { preset: 'private', sharing: true },
    }),
    brick('role id=agent', { name: '${params.prefix}-agent', description: 'Answers tickets' }),
    brick('grants id=agent-grants needs=agent,tickets', {
      role: '${params.prefix}-agent',
      grants: [{ resource: 'collections/${params.prefix}_tickets', action: 'read' }],
    }),
    brick('records id=seed needs=tickets', {
      collection: '${params.prefix}_tickets',
      rows: [
        { slug: 'welcome', title: 'Welcome' },
        { slug: 'howto', title: 'How to' },
      ],
    }),
    brick('view id=open needs=tickets', { name: 'Open tickets', collection: '${params.prefix}_tickets', shared: true }),
    brick('nav id=menu needs=tickets', {
      label: '${params.prefix} tickets',
      target: { kind: 'collection', ref: '${params.prefix}_tickets' },
    }),
    brick('webhook id=hook needs=tickets', {
      name: '${params.prefix}_hook',
      collection: '${params.prefix}_tickets',
      events: ['record.create'],
      url: 'https://hooks.example.com/tickets',
    }),
  ])

describe('planning a document against the project', () => {
  it('plans a new app as CREATE in dependency order, with its calls, and writes nothing', async () => {
    const before = await server.request('GET', '/api/v1/collections', { token: owner.token })
    const result = await plan(app())
    expect(result.ok, JSON.stringify(result.diagnostics)).toBe(true)
    expect(result.installable).toBe(true)
    expect(result.coverage.unsupported).toEqual([])
    expect(result.coverage.supported).toHaveLength(15)
    const byId = Object.fromEntries(result.verdicts.map((v) => [v.brickId, v]))
    expect(result.verdicts.map((v) => v.verdict)).toEqual(Array(8).fill('CREATE'))
    // Dependencies first: the collection before everything that names it.
    expect(result.verdicts[0]!.brickId).toBe('tickets')
    expect(byId['agent-grants']).toMatchObject({ autoApply: false, requiresConsent: true })
    expect(byId.tickets).toMatchObject({ autoApply: true, requiresConsent: false, contentHash: expect.any(String) })
    const calls = result.actions.map((a) => `${a.brickId} ${a.method} ${a.path}`)
    expect(calls).toContain(`tickets POST /api/v1/collections`)
    expect(calls).toContain(`tickets-access PATCH /api/v1/collections/${prefix}_tickets`)
    expect(calls).toContain(`agent-grants PUT /api/v1/roles/\${role:${prefix}-agent}/grants`)
    expect(calls.filter((c) => c.startsWith('seed POST'))).toHaveLength(2)
    for (const v of result.verdicts) expect(v.actionIds.length).toBeGreaterThan(0)
    // Parameters substituted in bodies; nothing was written.
    expect(result.actions[0]!.body).toMatchObject({ name: `${prefix}_tickets` })
    const after = await server.request('GET', '/api/v1/collections', { token: owner.token })
    expect(after.body).toEqual(before.body)
  })

  it('round trip: the same app made by hand plans as ADOPT with no changed path and no call', async () => {
    const first = await plan(app())
    // Apply every call as the owner, in order (the two-phase protocol's client side).
    const roles: Record<string, string> = {}
    for (const action of first.actions) {
      const path = action.path.replace(/\$\{role:([^}]+)\}/, (_m, name: string) => roles[name]!)
      const reply = await server.request(action.method, path, { token: owner.token, body: action.body })
      expect(reply.status, `${action.method} ${path}: ${reply.text}`).toBeLessThan(300)
      if (action.path === '/api/v1/roles') roles[reply.body.data.name] = reply.body.data.id
    }
    const again = await plan(app())
    expect(again.ok).toBe(true)
    for (const v of again.verdicts) {
      expect(v, v.brickId).toMatchObject({ verdict: 'ADOPT', changedPaths: [], actionIds: [] })
      expect(v.contentHash, v.brickId).toBe(first.verdicts.find((f) => f.brickId === v.brickId)!.contentHash)
    }
    expect(again.actions).toEqual([])

    // A change by hand shows as the path it changed, with the call that would change it back.
    const views = await server.request('GET', '/api/v1/views?limit=100', { token: owner.token })
    const view = (views.body.data as { id: string; name: string }[]).find((v) => v.name === 'Open tickets')!
    await server.request('PATCH', `/api/v1/views/${view.id}`, { token: owner.token, body: { layout: 'cards' } })
    const drifted = await plan(app())
    const open = drifted.verdicts.find((v) => v.brickId === 'open')!
    expect(open).toMatchObject({ verdict: 'ADOPT', changedPaths: ['layout'], requiresConsent: true })
    expect(drifted.actions.filter((a) => a.brickId === 'open')).toEqual([
      expect.objectContaining({ method: 'PATCH', path: `/api/v1/views/${view.id}` }),
    ])
  })

  it('blocks what cannot be installed as it stands, and says why', async () => {
    const other = `q${Math.random().toString(36).slice(2, 8)}`
    const doc = documentOf([
      brick('grants id=wide', { role: '${params.prefix}-x', grants: [{ resource: 'system/users', action: 'update' }] }),
      brick('attachment id=att', {
        lensId: 'no-such-lens',
        collection: '${params.prefix}_x',
        placement: 'record',
        label: 'L',
      }),
      brick('view id=v', { name: 'Open tickets', collection: `${prefix}_other`, shared: true }),
    ])
    const result = await plan(doc, { params: { prefix: other } })
    const reasons = Object.fromEntries(result.verdicts.map((v) => [v.brickId, v.reason]))
    expect(reasons).toEqual({
      wide: 'grant.escalates_installer',
      att: 'attachment.lens_missing',
      v: 'live.collection_mismatch',
    })
    expect(result.installable).toBe(false)
    expect(result.actions).toEqual([])
  })

  it('a viewer cannot read roles: its grants and role bricks are BLOCKED read.permission_missing', async () => {
    const doc = documentOf([brick('role id=r', { name: '${params.prefix}-r' })])
    const result = await plan(doc, {}, viewerActor)
    expect(result.verdicts[0]).toMatchObject({ verdict: 'BLOCKED', reason: 'read.permission_missing' })
  })

  it('refuses a secret value, reports missing secrets, skips unchosen assemblies, and fails a refused body', async () => {
    const params =
      '  - name: prefix\n    type: identifier\n    namespace: true\n    default: desk\n  - name: token\n    type: secret\n'
    const hook = brick('webhook id=hook', {
      name: '${params.prefix}_hook2',
      collection: `${prefix}_tickets`,
      events: ['record.create'],
      url: 'https://hooks.example.com/x',
      secret: '${params.token}',
    })
    const doc = documentOf([hook, brick('role id=extra', { name: '${params.prefix}-extra' })], {
      params,
      extra:
        'assemblies:\n  core:\n    title: Core\n    required: true\n    bricks: [hook]\n  more:\n    title: More\n    required: false\n    bricks: [extra]',
    })
    const refused = await plan(doc, { params: { prefix, token: 'x' } }).catch((e: unknown) => e)
    expect(isAppError(refused) && refused.code).toBe('invalid_request')
    expect(JSON.stringify((refused as { details: unknown }).details)).not.toContain('"x"')
    const result = await plan(doc, { assemblies: ['core'] })
    expect(result.missingSecrets).toEqual(['token'])
    expect(result.verdicts.find((v) => v.brickId === 'extra')!.verdict).toBe('SKIPPED')
    expect((await plan(doc, { assemblies: ['core'], secretsProvided: ['token'] })).missingSecrets).toEqual([])

    const bad = documentOf([brick('role id=r', { name: '${params.prefix}-r', adminAccess: 'yes' })])
    const failed = await plan(bad)
    expect(failed).toMatchObject({ ok: false, installable: false, verdicts: [], actions: [] })
    expect(failed.diagnostics).toContainEqual(expect.objectContaining({ code: 'brick.invalid_body', brickId: 'r' }))
  })
})
