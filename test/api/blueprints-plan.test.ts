import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { brick, documentOf } from '../../src/modules/blueprints/document/test-document.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'

/**
 * POST /api/v1/blueprints/plan over HTTP (decision 069): who may plan (a person holding
 * system/blueprints:read: 401 anonymous, 403 install_needs_person for a service key before its grants are
 * consulted, 403 for a viewer), the answer's shape, a secret value refused by name, and nothing written.
 */

let server: TestServer
let owner: Account
let editor: Account
let viewer: Account
const PLAN = '/api/v1/blueprints/plan'

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  editor = await createAccount(server, owner.token, { role: 'editor' })
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
})
afterAll(async () => {
  await server?.stop()
})

const source = documentOf([
  brick('collection id=notes', {
    name: '${params.prefix}_notes',
    accessPreset: 'private',
    fields: [{ name: 'title', type: 'text', required: true, unique: false, indexed: false }],
  }),
  brick('view id=all needs=notes', { name: 'All notes', collection: '${params.prefix}_notes', shared: true }),
])

describe('POST /api/v1/blueprints/plan', () => {
  it('answers the plan to a person who may plan, and writes nothing', async () => {
    const before = (await server.request('GET', '/api/v1/collections', { token: owner.token })).body
    for (const account of [owner, editor]) {
      const reply = await server.request('POST', PLAN, {
        token: account.token,
        body: { source, params: { prefix: 'nb' } },
      })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.data).toMatchObject({
        ok: true,
        installable: true,
        blueprint: { id: 'help-desk', name: 'Help desk', version: '1.0.0' },
        baseline: null,
        orphans: [],
        missingSecrets: [],
        verdicts: [
          { brickId: 'notes', kind: 'collection', verdict: 'CREATE', actionIds: ['a1'] },
          { brickId: 'all', kind: 'view', verdict: 'CREATE', actionIds: ['a2'] },
        ],
        actions: [
          { id: 'a1', brickId: 'notes', method: 'POST', path: '/api/v1/collections', body: { name: 'nb_notes' } },
          { id: 'a2', brickId: 'all', method: 'POST', path: '/api/v1/views', body: { collection: 'nb_notes' } },
        ],
      })
      expect(reply.body.data.coverage.supported).toHaveLength(15)
    }
    expect((await server.request('GET', '/api/v1/collections', { token: owner.token })).body).toEqual(before)
  })

  it('refuses anonymous callers (401), a service key before its grants (install_needs_person), a viewer (403)', async () => {
    expect((await server.request('POST', PLAN, { body: { source } })).status).toBe(401)
    const key = await server.request('POST', '/api/auth/api-keys', {
      token: owner.token,
      body: { label: 'svc', capabilities: ['system/blueprints:read'], service: true },
    })
    expect(key.status, key.text).toBe(201)
    const asKey = await server.request('POST', PLAN, { token: key.body.raw, body: { source } })
    expect(asKey.status, asKey.text).toBe(403)
    expect(asKey.body.error).toBe('install_needs_person')
    const asViewer = await server.request('POST', PLAN, { token: viewer.token, body: { source } })
    expect(asViewer.status, asViewer.text).toBe(403)
    expect(asViewer.body.error).toBe('forbidden')
  })

  it('refuses a secret value naming the parameter, never echoing it; a failing document is 200 ok false', async () => {
    const params =
      '  - name: prefix\n    type: identifier\n    namespace: true\n    default: desk\n  - name: token\n    type: secret\n'
    const withSecret = documentOf([brick('role id=r', { name: '${params.prefix}-r' })], { params })
    const reply = await server.request('POST', PLAN, {
      token: owner.token,
      body: { source: withSecret, params: { token: 'hunter2-very-secret' } },
    })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.text).toContain('token')
    expect(reply.text).not.toContain('hunter2-very-secret')

    const broken = await server.request('POST', PLAN, { token: owner.token, body: { source: 'no front matter' } })
    expect(broken.status, broken.text).toBe(200)
    expect(broken.body.data).toMatchObject({ ok: false, installable: false, verdicts: [], actions: [] })
    expect(broken.text).not.toContain('no front matter')
    const both = await server.request('POST', PLAN, { token: owner.token, body: { source, archive: 'UEsFBg==' } })
    expect(both.status, both.text).toBe(400)
  })

  it('reads as the planner: an editor planning grants for a role it may not read learns nothing of that role', async () => {
    // A role with grants the editor may not see; the plan must not show them (in changedPaths, actions or hashes).
    const role = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name: 'nb-auditor' } })
    expect(role.status, role.text).toBe(201)
    const grants = await server.request('PUT', `/api/v1/roles/${role.body.data.id}/grants`, {
      token: owner.token,
      body: { grants: [{ resource: 'system/audit-log', action: 'read' }] },
    })
    expect(grants.status, grants.text).toBe(200)
    const doc = documentOf([
      brick('grants id=g', { role: 'nb-auditor', grants: [{ resource: 'system/files', action: 'read' }] }),
    ])
    const reply = await server.request('POST', PLAN, { token: editor.token, body: { source: doc } })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.verdicts).toEqual([
      expect.objectContaining({
        brickId: 'g',
        verdict: 'BLOCKED',
        reason: 'read.permission_missing',
        resourceRef: null,
      }),
    ])
    expect(reply.body.data.actions).toEqual([])
    expect(reply.text).not.toContain('audit-log')
    expect(reply.text).not.toContain(role.body.data.id)
    // The owner, who may read roles, sees the role and the change.
    const asOwner = await server.request('POST', PLAN, { token: owner.token, body: { source: doc } })
    expect(asOwner.body.data.verdicts[0]).toMatchObject({
      verdict: 'ADOPT',
      changedPaths: ['grants'],
      resourceRef: role.body.data.id,
    })
  })
})
