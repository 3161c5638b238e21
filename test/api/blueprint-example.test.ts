import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'

/**
 * The worked example of docs/blueprints.md, as shipped in examples/: the help desk (v1) validates, plans as
 * CREATE against a fresh project, installs end to end over HTTP, and plans again as ADOPT with nothing
 * changed; its upgrade (v2) plans the field added, the view changed and the attachment added. What is checked
 * is what a user sees: the records, the view, the menu item, the flow, the webhook (its secret in no
 * response and no log line). Runs on PostgreSQL with TEST_DATABASE_URL.
 */

const v1 = readFileSync(new URL('../../examples/help-desk.ebp.md', import.meta.url), 'utf8')
const v2 = readFileSync(new URL('../../examples/help-desk-v2.ebp.md', import.meta.url), 'utf8')
const hookSecret = 'whsec-help-desk-example-9f2c41d7'
const params = { prefix: 'desk' }

let server: TestServer
let owner: Account
/** Every answer the test received, so none can be shown to hold the secret. */
const answers: string[] = []

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
})

async function call(method: string, path: string, body?: unknown): Promise<Reply> {
  const reply = await server.request(method, path, { token: owner.token, body })
  answers.push(reply.text)
  return reply
}

async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const reply = await call(method, path, body)
  expect(reply.status, `${method} ${path}: ${reply.text}`).toBeLessThan(300)
  return reply.body
}

const plan = async (source: string, extra: Record<string, unknown> = {}) =>
  (await ok('POST', '/api/v1/blueprints/plan', { source, params, ...extra })).data

interface Action {
  id: string
  brickId: string
  method: string
  path: string
  body: unknown
}

/**
 * The client side of the two-phase protocol: each action in order, as the installing person, with the
 * role placeholders of grants paths and the secret placeholders of bodies filled in by the client.
 */
async function applyActions(actions: Action[]): Promise<void> {
  const roles: Record<string, string> = {}
  for (const action of actions) {
    const path = action.path.replace(/\$\{role:([^}]+)\}/, (_m, name: string) => roles[name]!)
    const body = JSON.parse(JSON.stringify(action.body).replaceAll('${secret:hookSecret}', hookSecret))
    const reply = await ok(action.method, path, body)
    if (action.path === '/api/v1/roles') roles[reply.data.name] = reply.data.id
  }
}

const kindsOf = (source: string) => [...source.matchAll(/^```service:([a-z-]+) /gm)].map((m) => m[1])

describe('the worked example: examples/help-desk.ebp.md and its upgrade', () => {
  it('both documents validate with no diagnostic, and v1 has a brick of every kind the issue lists', async () => {
    for (const source of [v1, v2]) {
      const reply = await ok('POST', '/api/v1/blueprints/validate', { source })
      expect(reply.data, JSON.stringify(reply.data.diagnostics)).toMatchObject({ ok: true, diagnostics: [] })
    }
    const kinds = new Set(kindsOf(v1))
    for (const kind of ['collection', 'access', 'role', 'grants', 'records', 'flow', 'webhook', 'view', 'nav', 'lens'])
      expect(kinds, kind).toContain(kind)
    // The attachment of the lens comes with the upgrade: it names the lens by id (see examples/README.md).
    expect(kindsOf(v2)).toContain('attachment')
    // The secret is a parameter: no value of it is in either document.
    expect(v1).toContain('${params.hookSecret}')
    expect(v1 + v2).not.toContain(hookSecret)
  })

  it('plans v1 against a fresh project: every brick CREATE, installable, the webhook secret missing', async () => {
    const result = await plan(v1)
    expect(result).toMatchObject({ ok: true, installable: true, baseline: null, orphans: [] })
    expect(result.missingSecrets).toEqual(['hookSecret'])
    expect(result.verdicts.map((v: { verdict: string }) => v.verdict)).toEqual(Array(13).fill('CREATE'))
    const grants = result.verdicts.find((v: { brickId: string }) => v.brickId === 'agents-grants')
    expect(grants).toMatchObject({ requiresConsent: true, autoApply: false })
    const hook = result.actions.find((a: Action) => a.brickId === 'notify')
    expect(hook).toMatchObject({ method: 'POST', path: '/api/v1/webhooks' })
    expect(hook.body).toMatchObject({ name: 'desk_notify', secret: '${secret:hookSecret}' })
    // Flow templates pass through substitution untouched.
    expect(JSON.stringify(result.actions)).toContain('{{$trigger.body.after.title}}')
    expect((await plan(v1, { secretsProvided: ['hookSecret'] })).missingSecrets).toEqual([])
  })

  it('installs v1 end to end: what a user sees is there, the secret in no answer; planned again it is all ADOPT', async () => {
    const first = await plan(v1)
    await applyActions(first.actions)

    const categories = await ok('GET', '/api/v1/collections/desk_categories/records')
    expect(categories.data.map((r: { slug: string }) => r.slug).sort()).toEqual(['account', 'billing', 'technical'])
    const tickets = await ok('GET', '/api/v1/collections/desk_tickets/records')
    expect(tickets.data).toEqual([
      expect.objectContaining({ title: 'Welcome to the help desk', status: 'open', priority: 'low' }),
    ])
    const collection = (await ok('GET', '/api/v1/collections/desk_tickets')).data
    expect(collection.accessControl).toEqual({ preset: 'private', sharing: true })
    expect(collection.fields.find((f: { name: string }) => f.name === 'category').relationConfig).toMatchObject({
      targetCollection: 'desk_categories',
      relationType: 'belongsTo',
    })
    const role = (await ok('GET', '/api/v1/roles')).data.find((r: { name: string }) => r.name === 'desk_agents')
    expect(role).toMatchObject({ description: 'Help desk agents of Support' })
    const grants = (await ok('GET', `/api/v1/roles/${role.id}/grants`)).data
    expect(grants.map((g: { resource: string; action: string }) => `${g.resource}:${g.action}`).sort()).toEqual([
      'collections/desk_categories:read',
      'collections/desk_tickets:create',
      'collections/desk_tickets:read',
      'collections/desk_tickets:update',
    ])
    const views = (await ok('GET', '/api/v1/views?limit=100')).data
    expect(views).toContainEqual(
      expect.objectContaining({
        name: 'desk: open tickets',
        collection: 'desk_tickets',
        shared: true,
        layout: 'table',
      }),
    )
    const nav = (await ok('GET', '/api/v1/navigation?limit=100')).data
    expect(nav).toContainEqual(
      expect.objectContaining({ label: 'desk tickets', target: { kind: 'collection', ref: 'desk_tickets' } }),
    )
    const lenses = (await ok('GET', '/api/v1/lenses?limit=100')).data
    expect(lenses).toContainEqual(expect.objectContaining({ name: 'desk ticket summary', collection: 'desk_tickets' }))
    const flows = (await ok('GET', '/api/v1/automate/flows')).data
    expect(flows).toContainEqual(
      expect.objectContaining({ name: 'desk: triage', status: 'draft', collections: ['desk_tickets'] }),
    )
    const hooks = (await ok('GET', '/api/v1/webhooks')).data
    const hook = hooks.find((w: { name: string }) => w.name === 'desk_notify')
    expect(hook).toMatchObject({ hasSecret: true, url: 'https://hooks.example.com/help-desk' })
    await ok('GET', `/api/v1/webhooks/${hook.id}`)

    const again = await plan(v1, { secretsProvided: ['hookSecret'] })
    expect(again.installable).toBe(true)
    for (const v of again.verdicts)
      expect(v, v.brickId).toMatchObject({ verdict: 'ADOPT', changedPaths: [], actionIds: [] })
    expect(again.actions).toEqual([])
    // A second desk under another namespace collides with nothing of the first.
    const second = await plan(v1, { params: { prefix: 'it' } })
    expect(second.installable).toBe(true)
    expect(second.verdicts.map((v: { verdict: string }) => v.verdict)).toEqual(Array(13).fill('CREATE'))

    // The secret went in with the webhook's create call and came back in no answer and no log line since.
    const create = answers.findIndex((text) => text.includes('"desk_notify"'))
    expect(create).toBeGreaterThan(-1)
    for (const text of answers) expect(text).not.toContain(hookSecret)
    for (const line of server.logs) expect(line).not.toContain(hookSecret)
  })

  it('plans v2 over the installed app: the field added, the view changed, the attachment added', async () => {
    const lens = (await ok('GET', '/api/v1/lenses?limit=100')).data.find(
      (l: { name: string }) => l.name === 'desk ticket summary',
    )
    const result = await plan(v2, { params: { ...params, summaryLens: lens.id }, secretsProvided: ['hookSecret'] })
    expect(result).toMatchObject({ ok: true, installable: true, blueprint: { version: '1.1.0' } })
    const byId = Object.fromEntries(result.verdicts.map((v: { brickId: string }) => [v.brickId, v]))
    expect(byId.tickets).toMatchObject({ verdict: 'ADOPT', changedPaths: ['fields'] })
    expect(byId['open-tickets']).toMatchObject({ verdict: 'ADOPT' })
    expect(byId['open-tickets'].changedPaths.sort()).toEqual([
      'fields',
      'filter.status._eq',
      'filter.status._in',
      'layout',
      'layoutOptions.groupBy',
    ])
    expect(byId['summary-on-tickets']).toMatchObject({ verdict: 'CREATE' })
    expect(byId['welcome-seed']).toBeUndefined()
    const calls = result.actions.map((a: Action) => `${a.brickId} ${a.method} ${a.path}`)
    expect(calls).toEqual([
      'tickets PATCH /api/v1/collections/desk_tickets',
      expect.stringMatching(/^open-tickets PATCH \/api\/v1\/views\//),
      'summary-on-tickets POST /api/v1/lens-attachments',
    ])
  })
})
