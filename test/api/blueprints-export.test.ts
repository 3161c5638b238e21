import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'

/**
 * GET /api/v1/blueprints/export over HTTP (issue 30 item 7, decision 071). The proof is the round trip: a
 * small app made by hand (every kind), exported, validates with no error and plans against the same project
 * as ADOPT with no changed path and no call; planned under another namespace, every brick is CREATE.
 * Credentials never leave (secret parameters); the caller reads as themselves (403/404 as the resource's own
 * route); anonymous 401; a key may export. Runs on PostgreSQL with TEST_DATABASE_URL.
 */

let server: TestServer
let owner: Account
let editor: Account
const EXPORT = '/api/v1/blueprints/export'
const secrets = ['hook-secret-value-1234567890', 'header-secret-value-0987', 'flow-bearer-token-abcdef']
const p = `x${Math.random().toString(36).slice(2, 8)}`
const ids: Record<string, string> = {}

const call = async (method: string, path: string, body?: unknown, token = owner.token): Promise<Reply> => {
  const reply = await server.request(method, path, { token, ...(body === undefined ? {} : { body }) })
  expect(reply.status, `${method} ${path}: ${reply.text}`).toBeLessThan(300)
  return reply
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  editor = await createAccount(server, owner.token, { role: 'editor' })
  const tickets = `${p}_tickets`
  await call('POST', '/api/v1/collections', {
    name: tickets,
    storageType: process.env.TEST_STORAGE_TYPE || undefined,
    fields: [
      { name: 'title', type: 'text', required: true, unique: false, indexed: false },
      { name: 'slug', type: 'text', required: false, unique: false, indexed: true },
      { name: 'meta', type: 'json', required: false, unique: false, indexed: false },
    ],
  })
  await call('PATCH', `/api/v1/collections/${tickets}`, { accessControl: { preset: 'private', sharing: true } })
  ids.role = (await call('POST', '/api/v1/roles', { name: `${p}-agent`, description: 'Answers tickets' })).body.data.id
  await call('PUT', `/api/v1/roles/${ids.role}/grants`, {
    grants: [{ resource: `collections/${tickets}`, action: 'read' }],
  })
  for (const [slug, title] of [
    ['welcome', 'Welcome'],
    ['howto', 'How to'],
  ])
    await call('POST', `/api/v1/collections/${tickets}/records`, { slug, title, meta: { n: 1 } })
  ids.script = (
    await call('POST', '/api/v1/automate/scripts', { name: `${p}_score`, code: 'export default () => 1' })
  ).body.data.id
  ids.flow = (
    await call('POST', '/api/v1/automate/flows', {
      name: `${p} notify`,
      triggerType: 'manual',
      triggerConfig: {},
      operations: [
        { key: 'read', type: 'crud_read', config: { collection: tickets, limit: 5 } },
        {
          key: 'call',
          type: 'http_request',
          config: { url: 'https://api.example.com/x', auth: { type: 'bearer', token: secrets[2] } },
        },
      ],
    })
  ).body.data.id
  await call('POST', '/api/v1/webhooks', {
    name: `${p}_hook`,
    collection: tickets,
    events: ['record.create'],
    url: 'https://hooks.example.com/tickets',
    secret: secrets[0],
    headers: { 'X-Api-Key': secrets[1] },
  })
  ids.lens = (
    await call('POST', '/api/v1/lenses', {
      name: `${p} summary`,
      collection: tickets,
      fields: ['title'],
      template: { html: '<p>{{#rows}}{{title}}{{/rows}}</p>' },
    })
  ).body.data.id
  await call('POST', '/api/v1/lens-attachments', {
    lensId: ids.lens,
    collection: tickets,
    placement: 'record',
    label: 'Summary',
  })
  await call('POST', '/api/v1/renderers', {
    name: `${p} card`,
    collection: tickets,
    kind: 'card',
    template: '<b>{{title}}</b>',
  })
  ids.view = (
    await call('POST', '/api/v1/views', { name: `${p} open`, collection: tickets, shared: true, limit: 50 })
  ).body.data.id
  await call('POST', '/api/v1/navigation', { label: `${p} tickets`, target: { kind: 'collection', ref: tickets } })
  await call('POST', '/api/v1/containers', { name: `${p}_docs`, prefix: 'docs', allowedTypes: ['application/pdf'] })
  await call('POST', '/api/v1/search-indexes', {
    name: `${p}-search`,
    sources: [{ collection: tickets, fields: ['title'] }],
  })
})
afterAll(async () => {
  await server?.stop()
})

const everything = () =>
  new URLSearchParams({
    namespace: p,
    id: 'desk-export',
    name: 'Desk',
    collections: `${p}_tickets`,
    roles: `${p}-agent`,
    records: `${p}_tickets`,
    flows: `${p} notify`,
    webhooks: `${p}_hook`,
    scripts: `${p}_score`,
    lenses: `${p} summary`,
    renderers: `${p} card`,
    views: `${p} open`,
    containers: `${p}_docs`,
    searchIndexes: `${p}-search`,
    nav: 'true',
  })

const exported = async (query: URLSearchParams, token = owner.token) => {
  const reply = await server.request('GET', `${EXPORT}?${query}`, { token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data as {
    source: string
    bricks: { id: string; kind: string; needs: string[] }[]
    secrets: string[]
  }
}
const plan = async (source: string, prefix: string) => {
  const reply = await server.request('POST', '/api/v1/blueprints/plan', {
    token: owner.token,
    body: { source, params: { prefix } },
  })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

describe('GET /api/v1/blueprints/export: the round trip', () => {
  it('exports every kind; the document validates and plans against the same project as ADOPT with no change', async () => {
    const data = await exported(everything())
    const kinds = [...new Set(data.bricks.map((b) => b.kind))].sort()
    expect(kinds).toEqual(
      [
        'access',
        'attachment',
        'collection',
        'container',
        'flow',
        'grants',
        'lens',
        'nav',
        'records',
        'renderer',
        'role',
        'script',
        'search-index',
        'view',
        'webhook',
      ].sort(),
    )
    // Credentials never leave: each is a secret parameter, declared without a default.
    for (const secret of secrets) expect(JSON.stringify(data)).not.toContain(secret)
    expect(data.secrets).toHaveLength(3)
    for (const name of data.secrets) expect(data.source).toContain(`  - name: ${name}\n    type: secret\n`)
    // Every created name is templated: nothing of the namespace is left as written.
    expect(data.source).not.toContain(`${p}_`)
    expect(data.source).toContain(`default: "${p}"`)

    const validation = await server.request('POST', '/api/v1/blueprints/validate', {
      token: owner.token,
      body: { source: data.source },
    })
    expect(validation.status, validation.text).toBe(200)
    expect(validation.body.data).toMatchObject({ ok: true, diagnostics: [] })
    expect(validation.body.data.bricks).toHaveLength(data.bricks.length)

    const same = await plan(data.source, p)
    expect(same.ok, JSON.stringify(same.diagnostics)).toBe(true)
    expect(same.verdicts).toHaveLength(data.bricks.length)
    for (const v of same.verdicts)
      expect(v, v.brickId).toMatchObject({ verdict: 'ADOPT', changedPaths: [], actionIds: [] })
    expect(same.actions).toEqual([])
    expect(same.missingSecrets).toEqual([...data.secrets].sort())
  })

  it('planned under another namespace, every brick is CREATE', async () => {
    const data = await exported(everything())
    const other = await plan(data.source, 'other')
    expect(other.ok, JSON.stringify(other.diagnostics)).toBe(true)
    for (const v of other.verdicts) expect(v, v.brickId).toMatchObject({ verdict: 'CREATE' })
    expect(other.actions.find((a: { brickId: string }) => a.brickId === 'collection.tickets').body).toMatchObject({
      name: 'other_tickets',
    })
  })
})

describe('GET /api/v1/blueprints/export: who may export, and what they see', () => {
  it('refuses anonymous callers (401) and a caller without system/blueprints:read (403)', async () => {
    const query = new URLSearchParams({ namespace: p, collections: `${p}_tickets` })
    const anonymous = await server.request('GET', `${EXPORT}?${query}`)
    expect(anonymous.status, anonymous.text).toBe(401)
    const key = await call('POST', '/api/auth/api-keys', {
      label: 'no-blueprints',
      capabilities: [`collections/${p}_tickets:read`],
      service: true,
    })
    const refused = await server.request('GET', `${EXPORT}?${query}`, { token: key.body.raw })
    expect(refused.status, refused.text).toBe(403)
    expect(refused.body.error).toBe('forbidden')
    expect(refused.text).not.toContain('title')
  })

  it('a key may export (no person needed), reading only what its capabilities open', async () => {
    const key = await call('POST', '/api/auth/api-keys', {
      label: 'exporter',
      capabilities: ['system/blueprints:read', `collections/${p}_tickets:read`],
      service: true,
    })
    const query = new URLSearchParams({ namespace: p, collections: `${p}_tickets`, records: `${p}_tickets` })
    const data = await exported(query, key.body.raw)
    expect(data.bricks.map((b) => b.id)).toEqual(['collection.tickets', 'access.tickets', 'records.tickets'])
    // Roles are not among its capabilities: the role's route would refuse it, and so does the export.
    const roles = await server.request('GET', `${EXPORT}?namespace=${p}&roles=${p}-agent`, { token: key.body.raw })
    expect(roles.status, roles.text).toBe(403)
    expect(roles.text).not.toContain(ids.role!)
  })

  it('an editor exporting a role whose grants it may not read is refused, learning nothing of them', async () => {
    const auditor = await call('POST', '/api/v1/roles', { name: `${p}-auditor` })
    await call('PUT', `/api/v1/roles/${auditor.body.data.id}/grants`, {
      grants: [{ resource: 'system/audit-log', action: 'read' }],
    })
    const reply = await server.request('GET', `${EXPORT}?namespace=${p}&roles=${p}-auditor`, { token: editor.token })
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body.error).toBe('forbidden')
    expect(reply.text).not.toContain('audit-log')
    expect(reply.text).not.toContain(auditor.body.data.id)
    // What the editor may read it exports; the owner, who may read roles, gets the grants.
    const collections = await exported(new URLSearchParams({ namespace: p, collections: `${p}_tickets` }), editor.token)
    expect(collections.bricks.map((b) => b.kind)).toEqual(['collection', 'access'])
    const asOwner = await exported(new URLSearchParams({ namespace: p, roles: `${p}-auditor` }))
    expect(asOwner.source).toContain('"resource": "system/audit-log"')
  })

  it('a name the caller cannot see is 404 whether it exists or not', async () => {
    const missing = await server.request('GET', `${EXPORT}?namespace=${p}&collections=${p}_ghost`, {
      token: owner.token,
    })
    expect(missing.status, missing.text).toBe(404)
    expect(missing.body).toMatchObject({ error: 'collection_not_found', details: { name: `${p}_ghost` } })
    const view = await server.request('GET', `${EXPORT}?namespace=${p}&views=${p}%20nowhere`, { token: owner.token })
    expect(view.status, view.text).toBe(404)
    expect(view.body.error).toBe('not_found')
    // A personal view of the owner is not the editor's to see, let alone export.
    const personal = await call('POST', '/api/v1/views', {
      name: `${p} mine`,
      collection: `${p}_tickets`,
      shared: false,
    })
    const hidden = await server.request('GET', `${EXPORT}?namespace=${p}&views=${personal.body.data.id}`, {
      token: editor.token,
    })
    expect(hidden.status, hidden.text).toBe(404)
  })
})

describe('GET /api/v1/blueprints/export: the document', () => {
  it('answers the text itself with format=md, the same as the JSON source, and the same text twice', async () => {
    const json = await exported(everything())
    const md = await server.request('GET', `${EXPORT}?${everything()}&format=md`, { token: owner.token })
    expect(md.status, md.text).toBe(200)
    expect(md.headers.get('content-type')).toMatch(/^text\/markdown/)
    expect(md.headers.get('content-disposition')).toContain('desk-export.ebp.md')
    expect(md.text).toBe(json.source)
    for (const secret of secrets) expect(md.text).not.toContain(secret)
  })

  it('orders bricks so that each needs only earlier ones (collections before what names them)', async () => {
    const { bricks } = await exported(everything())
    const seen = new Set<string>()
    for (const brick of bricks) {
      for (const need of brick.needs) expect(seen, `${brick.id} needs ${need}`).toContain(need)
      seen.add(brick.id)
    }
    const needs = Object.fromEntries(bricks.map((b) => [b.id, b.needs]))
    expect(needs['access.tickets']).toEqual(['collection.tickets'])
    expect(needs['records.tickets']).toEqual(['collection.tickets'])
    expect(needs['grants.agent']).toEqual(['collection.tickets', 'role.agent'])
    expect(needs['attachment.summary-record-tickets']).toEqual(['collection.tickets', 'lens.summary'])
    expect(needs['nav.tickets']).toEqual(['collection.tickets'])
  })

  it('* exports every resource of the kind whose name holds the namespace, and nothing else', async () => {
    await call('POST', '/api/v1/collections', {
      name: `z${p}_other`,
      fields: [{ name: 'title', type: 'text', required: false, unique: false, indexed: false }],
    })
    const data = await exported(new URLSearchParams({ namespace: p, collections: '*', access: 'false' }))
    expect(data.bricks.map((b) => b.id)).toEqual(['collection.tickets'])
  })

  it('refuses a name without the namespace (the naming rule), naming it', async () => {
    const plain = `plain${Math.random().toString(36).slice(2, 8)}`
    await call('POST', '/api/v1/collections', {
      name: plain,
      fields: [{ name: 'title', type: 'text', required: false, unique: false, indexed: false }],
    })
    const reply = await server.request('GET', `${EXPORT}?namespace=${p}&collections=${plain},${p}_tickets`, {
      token: owner.token,
    })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body).toMatchObject({
      error: 'invalid_request',
      details: { code: 'naming.missing_namespace', resources: [`collection "${plain}"`] },
    })
  })

  it('refuses a query it cannot honour, naming the parameter', async () => {
    const bad: [string, string][] = [
      ['namespace=Desk&collections=a', 'namespace'],
      [`namespace=${p}`, 'collections'],
      [`namespace=${p}&collections=${p}_tickets&id=X`, 'id'],
      [`namespace=${p}&collections=${p}_tickets&version=one`, 'version'],
      [`namespace=${p}&collections=${p}_tickets&access=maybe`, 'access'],
      [`namespace=${p}&collections=${p}_tickets&attachment=true`, 'attachment'],
      [`collections=${p}_tickets`, 'namespace'],
    ]
    for (const [query, named] of bad) {
      const reply = await server.request('GET', `${EXPORT}?${query}`, { token: owner.token })
      expect(reply.status, query).toBe(400)
      expect(reply.body.error, query).toBe('invalid_request')
      expect(reply.text, query).toContain(named)
    }
  })
})

describe('GET /api/v1/blueprints/export: seed records', () => {
  it('seeds by a named key, and refuses a collection it cannot seed as it stands', async () => {
    const tags = `${p}_tags`
    await call('POST', '/api/v1/collections', {
      name: tags,
      fields: [
        { name: 'code', type: 'text', required: false, unique: false, indexed: false },
        { name: 'label', type: 'text', required: false, unique: false, indexed: false },
      ],
    })
    const none = await server.request('GET', `${EXPORT}?namespace=${p}&records=${tags}`, { token: owner.token })
    // No records: nothing to seed, so no brick.
    expect(none.status, none.text).toBe(200)
    expect(none.body.data.bricks).toEqual([])
    await call('POST', `/api/v1/collections/${tags}/records`, { code: 'b', label: 'Bug' })
    await call('POST', `/api/v1/collections/${tags}/records`, { code: 'a', label: 'Bug' })
    const noKey = await server.request('GET', `${EXPORT}?namespace=${p}&records=${tags}`, { token: owner.token })
    expect(noKey.status, noKey.text).toBe(400)
    expect(noKey.text).toContain(`records=${tags}:<column>`)
    const twice = await server.request('GET', `${EXPORT}?namespace=${p}&records=${tags}:label`, { token: owner.token })
    expect(twice.status, twice.text).toBe(400)
    expect(twice.text).toContain('share the label')
    const data = await exported(new URLSearchParams({ namespace: p, collections: tags, records: `${tags}:code` }))
    expect(data.source).toContain('"key": "code"')
    expect(data.source.indexOf('"code": "a"')).toBeLessThan(data.source.indexOf('"code": "b"'))
    const same = await plan(data.source, p)
    for (const v of same.verdicts) expect(v, v.brickId).toMatchObject({ verdict: 'ADOPT', changedPaths: [] })

    const batch = (from: number) =>
      Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          call('POST', `/api/v1/collections/${tags}/records`, { code: `c${from + i}`, label: 'x' }),
        ),
      )
    for (const from of [0, 50, 100, 150]) await batch(from)
    const many = await server.request('GET', `${EXPORT}?namespace=${p}&records=${tags}:code`, { token: owner.token })
    expect(many.status, many.text).toBe(400)
    expect(many.text).toContain('at most 200')
  })

  it('refuses a live value a document would read as a parameter', async () => {
    await call('POST', '/api/v1/renderers', {
      name: `${p} odd`,
      collection: `${p}_tickets`,
      kind: 'card',
      template: 'costs ${params.price}',
    })
    const reply = await server.request('GET', `${EXPORT}?namespace=${p}&renderers=${p}%20odd`, { token: owner.token })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.text).toContain(`${p} odd`)
  })
})
