import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Principal } from '../../src/lib/principal.js'
import { readBlueprint } from '../../src/modules/blueprints/document/read.js'
import { brick, documentOf, namespaceParam } from '../../src/modules/blueprints/document/test-document.js'
import { planBlueprint } from '../../src/modules/blueprints/plan/planner.js'
import type { PlanResult } from '../../src/modules/blueprints/plan/verdicts.js'
import { brickProviders } from '../../src/modules/blueprints/providers/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, roleId, sessionPrincipal, signUpOwner, type Account } from '../support/identity.js'

/**
 * Every BLOCKED reason and every warning of the spec ("Blueprint endpoints"), each shown by a plan that
 * gives it (issue 30, "Must show"), over HTTP where a caller can reach it; flows delegating their runs
 * (runAs) installed and read back; and a plan writes nothing, counted in every table. SQLite, and
 * PostgreSQL with TEST_DATABASE_URL.
 */

/** The spec's BLOCKED reasons and warnings, and ours (decision 069). */
const blockedReasons = [
  'plan.no_reader',
  'plan.no_update_path',
  'live.ambiguous_by_slug',
  'live.ambiguous_by_label',
  'live.nested_item',
  'live.collection_mismatch',
  'attachment.lens_missing',
  'brick.late_bound_lens',
  'read.permission_missing',
  'read.field_scope_narrowed',
  'params.unresolved',
  'grant.escalates_installer',
  'flow.run_as_not_delegable',
]
const warningCodes = [
  'read.item_filter_not_applicable',
  'lens.not_published',
  'script.limits_not_compared',
  'container.instance_local_members',
  'plan.version_downgrade',
  // Ours: a flow delegating to a role an earlier brick makes.
  'flow.run_as_checked_at_apply',
]

let server: TestServer
let owner: Account
/** Holds system/blueprints:read, reads notes' title only and rows through a row filter; no roles. */
let clerk: Account
/** Flows without system/automate:manage. */
let automator: Account
/** Flows with system/automate:manage (not an administrator). */
let manager: Account
let ownerActor: Principal
let managerActor: Principal
const p = `r${Math.random().toString(36).slice(2, 7)}`
const PLAN = '/api/v1/blueprints/plan'
const INSTALLS = '/api/v1/blueprints/installs'

const call = async (method: string, path: string, body?: unknown, token = owner.token) => {
  const reply = await server.request(method, path, { token, ...(body === undefined ? {} : { body }) })
  expect(reply.status, `${method} ${path}: ${reply.text}`).toBeLessThan(300)
  return reply.body.data
}

/** A role with these grants, and an account holding it. */
async function accountWith(name: string, grants: unknown[]): Promise<Account> {
  const role = await call('POST', '/api/v1/roles', { name })
  await call('PUT', `/api/v1/roles/${role.id}/grants`, { grants })
  return createAccount(server, owner.token, { role: name })
}

const fields = [
  { name: 'title', type: 'text', required: false, unique: false, indexed: false },
  { name: 'slug', type: 'text', required: false, unique: false, indexed: false },
]
const automate = (...actions: string[]) => actions.map((action) => ({ resource: 'system/automate', action }))

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  ownerActor = await sessionPrincipal(server, owner.token, owner, true)
  for (const name of [`${p}_notes`, `${p}_rows`]) await call('POST', '/api/v1/collections', { name, fields })
  await call('POST', '/api/v1/collections', { name: `${p}_do`, storageType: 'durable_object', fields })
  // A seed key held twice; two top-level menu items of one label; one label only nested.
  for (const title of ['One', 'Two'])
    await call('POST', `/api/v1/collections/${p}_notes/records`, { slug: 'dup', title })
  const target = { kind: 'collection', ref: `${p}_notes` }
  for (let i = 0; i < 2; i++) await call('POST', '/api/v1/navigation', { label: `${p} twice`, target })
  const parent = await call('POST', '/api/v1/navigation', { label: `${p} parent`, target })
  await call('POST', '/api/v1/navigation', { label: `${p} child`, target, parentId: parent.id })
  await call('POST', '/api/v1/views', { name: `${p} open`, collection: `${p}_rows`, shared: true })

  const plans = { resource: 'system/blueprints', action: 'read' }
  clerk = await accountWith(`${p}-clerk`, [
    plans,
    { resource: `collections/${p}_notes`, action: 'read', fields: ['title'] },
    { resource: `collections/${p}_rows`, action: 'read', item_filter: { title: { _eq: 'mine' } } },
  ])
  automator = await accountWith(`${p}-automator`, [plans, ...automate('read', 'create', 'update', 'delete')])
  manager = await accountWith(`${p}-manager`, [plans, ...automate('read', 'create', 'update', 'delete', 'manage')])
  managerActor = await sessionPrincipal(server, owner.token, manager)
  // Within the manager's reach: it holds what this role holds.
  const helper = await call('POST', '/api/v1/roles', { name: `${p}-helper` })
  await call('PUT', `/api/v1/roles/${helper.id}/grants`, { grants: automate('read') })
})
afterAll(async () => {
  await server?.stop()
})

const planAs = async (token: string, source: string, params: Record<string, unknown> = {}): Promise<PlanResult> => {
  const reply = await server.request('POST', PLAN, { token, body: { source, params: { prefix: p, ...params } } })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data as PlanResult
}
const one = (info: string, body: unknown) => documentOf([brick(info, body)])
const flowBody = (name: string, runAs?: string) => ({
  name,
  triggerType: 'manual',
  triggerConfig: {},
  operations: [],
  ...(runAs === undefined ? {} : { runAs }),
})

interface Case {
  code: string
  /** The brick the plan reports it on (null: a diagnostic of the plan). */
  brickId: string | null
  plan(): Promise<PlanResult>
}

const cases: Case[] = [
  {
    code: 'plan.no_reader',
    brickId: 'v',
    // No route reaches an instance without a kind's provider: the planner is called with one taken out.
    async plan() {
      const providers = new Map(brickProviders(server.app.services))
      providers.delete('view')
      const source = one('view id=v', { name: '${params.prefix} new', collection: `${p}_rows`, shared: true })
      return planBlueprint(providers, ownerActor, readBlueprint(source), { params: { prefix: p } })
    },
  },
  {
    code: 'plan.no_update_path',
    brickId: 'c',
    // The live collection is a durable object; the brick's is the default storage, which no update changes.
    plan: () =>
      planAs(owner.token, one('collection id=c', { name: '${params.prefix}_do', fields, accessPreset: 'private' })),
  },
  {
    code: 'live.ambiguous_by_slug',
    brickId: 's',
    plan: () =>
      planAs(owner.token, one('records id=s', { collection: `${p}_notes`, rows: [{ slug: 'dup', title: 'One' }] })),
  },
  {
    code: 'live.ambiguous_by_label',
    brickId: 'n',
    plan: () =>
      planAs(owner.token, one('nav id=n', { label: '${params.prefix} twice', target: { kind: 'view', ref: 'x' } })),
  },
  {
    code: 'live.nested_item',
    brickId: 'n',
    plan: () =>
      planAs(owner.token, one('nav id=n', { label: '${params.prefix} child', target: { kind: 'view', ref: 'x' } })),
  },
  {
    code: 'live.collection_mismatch',
    brickId: 'v',
    plan: () =>
      planAs(owner.token, one('view id=v', { name: '${params.prefix} open', collection: `${p}_notes`, shared: true })),
  },
  {
    code: 'attachment.lens_missing',
    brickId: 'a',
    plan: () =>
      planAs(
        owner.token,
        one('attachment id=a', { lensId: 'no-such-lens', collection: `${p}_notes`, placement: 'record', label: 'L' }),
      ),
  },
  {
    code: 'brick.late_bound_lens',
    brickId: 'a',
    plan: () =>
      planAs(
        owner.token,
        one('attachment id=a', { lensId: '@ref:lens', collection: `${p}_notes`, placement: 'record', label: 'L' }),
      ),
  },
  {
    code: 'read.permission_missing',
    brickId: 'r',
    // The clerk may plan but not read roles.
    plan: () => planAs(clerk.token, one('role id=r', { name: '${params.prefix}-new' })),
  },
  {
    code: 'read.field_scope_narrowed',
    brickId: 's',
    // The clerk reads notes' title only: the seed's slug could never be read back.
    plan: () =>
      planAs(clerk.token, one('records id=s', { collection: `${p}_notes`, rows: [{ slug: 'new', title: 'New' }] })),
  },
  {
    code: 'params.unresolved',
    brickId: 'r',
    plan: () =>
      planAs(
        owner.token,
        documentOf([brick('role id=r', { name: '${params.prefix}-motto', description: '${params.motto}' })], {
          params: `${namespaceParam}  - name: motto\n    type: string\n`,
        }),
      ),
  },
  {
    code: 'grant.escalates_installer',
    brickId: 'g',
    plan: () =>
      planAs(
        owner.token,
        one('grants id=g', { role: `${p}-helper`, grants: [{ resource: 'collections/*', action: 'read' }] }),
      ),
  },
  {
    code: 'flow.run_as_not_delegable',
    brickId: 'f',
    // Without system/automate:manage no delegation can be set.
    plan: () => planAs(automator.token, one('flow id=f', flowBody('${params.prefix} f', 'flow_owner'))),
  },
  {
    code: 'read.item_filter_not_applicable',
    brickId: 's',
    // The clerk reads rows through a row filter: a seed row outside it is not seen.
    plan: () =>
      planAs(clerk.token, one('records id=s', { collection: `${p}_rows`, rows: [{ slug: 'new', title: 'New' }] })),
  },
  {
    code: 'lens.not_published',
    brickId: 'l',
    plan: () =>
      planAs(
        owner.token,
        one('lens id=l', { name: '${params.prefix} lens', collection: `${p}_notes`, fields: ['title'] }),
      ),
  },
  {
    code: 'script.limits_not_compared',
    brickId: 's',
    plan: () =>
      planAs(owner.token, one('script id=s', { name: '${params.prefix}_score', code: 'export default () => 1' })),
  },
  {
    code: 'container.instance_local_members',
    brickId: 'c',
    plan: () => planAs(owner.token, one('container id=c', { name: '${params.prefix}_docs', imageSizes: [] })),
  },
  {
    code: 'plan.version_downgrade',
    brickId: null,
    // Installed at 2.0.0 (another blueprint id and namespace value), planned at 1.0.0.
    async plan() {
      const source = (version: string) =>
        one('role id=r', { name: '${params.prefix}-v' })
          .replace('id: help-desk', 'id: downgrade-app')
          .replace('version: 1.0.0', `version: ${version}`)
      const installed = await server.request('POST', `${INSTALLS}?apply=true`, {
        token: owner.token,
        body: { source: source('2.0.0'), params: { prefix: `${p}v` } },
      })
      expect(installed.status, installed.text).toBe(201)
      return planAs(owner.token, source('1.0.0'), { prefix: `${p}v` })
    },
  },
  {
    code: 'flow.run_as_checked_at_apply',
    brickId: 'f',
    plan: () =>
      planAs(
        owner.token,
        documentOf([
          brick('role id=later', { name: '${params.prefix}-later' }),
          brick('flow id=f needs=later', flowBody('${params.prefix} later', 'role:${params.prefix}-later')),
        ]),
      ),
  },
]

describe('every BLOCKED reason and warning of the spec', () => {
  it('the cases below are exactly the spec’s reasons and warnings (and ours)', () => {
    expect(cases.map((c) => c.code).sort()).toEqual([...blockedReasons, ...warningCodes].sort())
  })

  it.each(cases.map((c) => [c.code, c] as const))('%s', async (code, c) => {
    const result = await c.plan()
    expect(result.ok, JSON.stringify(result.diagnostics)).toBe(true)
    if (c.brickId === null) {
      expect(result.diagnostics).toContainEqual(expect.objectContaining({ code, severity: 'warning' }))
      return
    }
    const verdict = result.verdicts.find((v) => v.brickId === c.brickId)!
    if (blockedReasons.includes(code)) {
      expect(verdict, JSON.stringify(verdict)).toMatchObject({ verdict: 'BLOCKED', reason: code, actionIds: [] })
      expect(verdict.warnings).toContainEqual(expect.objectContaining({ code, message: expect.any(String) }))
      expect(result.installable).toBe(false)
      expect(result.actions.filter((a) => a.brickId === c.brickId)).toEqual([])
    } else {
      // A warning is told, never blocks.
      expect(verdict.verdict, JSON.stringify(verdict)).not.toBe('BLOCKED')
      expect(verdict.warnings).toContainEqual(expect.objectContaining({ code, message: expect.any(String) }))
      expect(result.installable).toBe(true)
    }
  })

  it('narrowed columns block only what the seed writes; a clerk seeding the title alone is not blocked', async () => {
    const result = await planAs(
      clerk.token,
      one('records id=s', { collection: `${p}_notes`, key: 'title', rows: [{ title: 'New' }] }),
    )
    expect(result.verdicts[0]).toMatchObject({ verdict: 'CREATE', reason: null })
    // The owner reads every column and every row: neither reason, no warning.
    const asOwner = await planAs(
      owner.token,
      one('records id=s', { collection: `${p}_rows`, rows: [{ slug: 'a', title: 'A' }] }),
    )
    expect(asOwner.verdicts[0]).toMatchObject({ verdict: 'CREATE', warnings: [] })
  })
})

describe('flows delegating their runs (runAs)', () => {
  const helped = (runAs = `role:\${params.prefix}-helper`) =>
    one('flow id=f', flowBody('${params.prefix} helped', runAs))

  it('plans a delegation within reach as CREATE: the create, then a PATCH naming the new flow and the role', async () => {
    const result = await planAs(manager.token, helped())
    expect(result.verdicts[0]).toMatchObject({ verdict: 'CREATE', reason: null, warnings: [] })
    expect(result.actions.map(({ method, path, body }) => ({ method, path, body }))).toEqual([
      {
        method: 'POST',
        path: '/api/v1/automate/flows',
        body: expect.not.objectContaining({ runAs: expect.anything() }),
      },
      {
        method: 'PATCH',
        path: `/api/v1/automate/flows/\${flow:${p} helped}`,
        body: { runAs: `role:\${role:${p}-helper}` },
      },
    ])
  })

  it('blocks a role holding more than the installer, and any delegation without manage, saying why', async () => {
    const above = await planAs(manager.token, helped('role:editor'))
    expect(above.verdicts[0]).toMatchObject({ verdict: 'BLOCKED', reason: 'flow.run_as_not_delegable' })
    expect(above.verdicts[0]!.warnings[0]!.message).toContain('editor')
    const unmanaged = await planAs(automator.token, helped())
    expect(unmanaged.verdicts[0]).toMatchObject({ verdict: 'BLOCKED', reason: 'flow.run_as_not_delegable' })
    expect(unmanaged.verdicts[0]!.warnings[0]!.message).toContain('system/automate:manage')
    // triggering_user is anyone's who may write the flow.
    const plain = await planAs(automator.token, helped('triggering_user'))
    expect(plain.verdicts[0]).toMatchObject({ verdict: 'CREATE' })
    expect(plain.actions).toHaveLength(1)
  })

  it('a runAs that is not triggering_user, flow_owner or role:<name> fails the document', async () => {
    const result = await planAs(owner.token, helped('role:Not A Name'))
    expect(result).toMatchObject({ ok: false, verdicts: [], actions: [] })
    expect(result.diagnostics).toContainEqual(
      expect.objectContaining({ code: 'brick.invalid_body', brickId: 'f', message: expect.stringContaining('runAs') }),
    )
  })

  it('installs as the manager: a draft running as the role (by id), read back by name, then NOOP', async () => {
    const source = helped().replace('id: help-desk', 'id: helped-flow')
    const reply = await server.request('POST', `${INSTALLS}?apply=true`, {
      token: manager.token,
      body: { source, params: { prefix: p } },
    })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.data).toMatchObject({ status: 'complete', resources: [{ brickId: 'f', status: 'settled' }] })
    const flow = await call('GET', `/api/v1/automate/flows/${reply.body.data.resources[0].resourceRef}`)
    expect(flow).toMatchObject({
      name: `${p} helped`,
      status: 'draft',
      runAs: `role:${await roleId(server, owner.token, `${p}-helper`)}`,
    })
    const again = await planAs(manager.token, source)
    expect(again.verdicts[0]).toMatchObject({ verdict: 'NOOP', changedPaths: [], actionIds: [] })
  })

  it('a role the same document makes: installed first, then delegated to', async () => {
    const source = documentOf([
      brick('role id=bot', { name: '${params.prefix}-bot' }),
      brick('flow id=f needs=bot', flowBody('${params.prefix} bot flow', 'role:${params.prefix}-bot')),
    ]).replace('id: help-desk', 'id: bot-flow')
    const planned = await planAs(owner.token, source)
    expect(planned.verdicts[1]!.warnings).toEqual([expect.objectContaining({ code: 'flow.run_as_checked_at_apply' })])
    const reply = await server.request('POST', `${INSTALLS}?apply=true`, {
      token: owner.token,
      body: { source, params: { prefix: p } },
    })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.data.status).toBe('complete')
    const ref = reply.body.data.resources.find((r: { brickId: string }) => r.brickId === 'f').resourceRef
    expect((await call('GET', `/api/v1/automate/flows/${ref}`)).runAs).toBe(
      `role:${await roleId(server, owner.token, `${p}-bot`)}`,
    )
    const again = await planAs(owner.token, source)
    expect(again.verdicts.map((v) => v.verdict)).toEqual(['NOOP', 'NOOP'])
  })

  it('a flow delegated by hand: its brick adopts it as it is, and one without runAs brings it back to triggering_user', async () => {
    const made = await call('POST', '/api/v1/automate/flows', flowBody(`${p} by hand`))
    await call('PATCH', `/api/v1/automate/flows/${made.id}`, {
      runAs: `role:${await roleId(server, owner.token, `${p}-helper`)}`,
    })
    const same = await planAs(
      owner.token,
      one('flow id=f', flowBody('${params.prefix} by hand', 'role:${params.prefix}-helper')),
    )
    expect(same.verdicts[0]).toMatchObject({ verdict: 'ADOPT', changedPaths: [], actionIds: [] })
    const plain = await planAs(owner.token, one('flow id=f', flowBody('${params.prefix} by hand')))
    expect(plain.verdicts[0]).toMatchObject({ verdict: 'ADOPT', changedPaths: ['runAs'], requiresConsent: true })
    expect(plain.actions).toEqual([
      expect.objectContaining({
        method: 'PATCH',
        path: `/api/v1/automate/flows/${made.id}`,
        body: expect.objectContaining({ runAs: 'triggering_user' }),
      }),
    ])
  })

  it('an apply the flow service refuses leaves no flow behind', async () => {
    const provider = brickProviders(server.app.services).get('flow')!
    const names = async () => ((await call('GET', '/api/v1/automate/flows')) as { name: string }[]).map((f) => f.name)
    const refused = await provider
      .create(managerActor, provider.desired(flowBody(`${p} refused`, 'role:editor')))
      .catch((err: unknown) => err)
    expect(refused).toMatchObject({ code: 'forbidden' })
    // A role that never came: the flow made is taken away again.
    const missing = await provider
      .create(ownerActor, provider.desired(flowBody(`${p} orphaned`, `role:${p}-never`)))
      .catch((err: unknown) => err)
    expect(missing).toMatchObject({ code: 'validation_error' })
    expect(await names()).not.toEqual(expect.arrayContaining([`${p} refused`]))
    expect(await names()).not.toEqual(expect.arrayContaining([`${p} orphaned`]))
  })
})

/** Rows in every table: the system database's, and on SQLite the project's data database too. */
async function rowCounts(): Promise<Record<string, number>> {
  const registry = server.app.registry
  const out: Record<string, number> = {}
  const count = async (db: typeof registry.system.db, label: string, tables: { s?: string; t: string }[]) => {
    for (const { s, t } of tables) {
      const { rows } = await sql<{
        n: string | number
      }>`select count(*) as n from ${s ? sql.id(s, t) : sql.id(t)}`.execute(db)
      out[`${label}${s ?? ''}.${t}`] = Number(rows[0]!.n)
    }
  }
  if (registry.kind === 'postgres') {
    const db = registry.system.db
    const { rows } = await sql<{ s: string; t: string }>`select table_schema as s, table_name as t
      from information_schema.tables
      where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`.execute(db)
    await count(db, '', rows)
    return out
  }
  const data = await registry.get(server.app.defaultProject.id)
  for (const [label, db] of [
    ['system:', registry.system.db],
    ['data:', data.db],
  ] as const) {
    const { rows } = await sql<{ t: string }>`select name as t from sqlite_master where type = 'table'`.execute(db)
    await count(db, label, rows)
  }
  return out
}

describe('plan writes nothing', () => {
  it('counts the rows of every table before and after plans of a document of every kind', async () => {
    const lens = await call('POST', '/api/v1/lenses', {
      name: `${p} counted lens`,
      collection: `${p}_notes`,
      fields: ['title'],
    })
    const q = `${p}c`
    const tickets = '${params.prefix}_tickets'
    const base = [
      brick('collection id=tickets', { name: tickets, fields, accessPreset: 'private' }),
      brick('role id=agent', { name: '${params.prefix}-agent' }),
    ]
    const rich = documentOf([
      ...base,
      brick('access id=acl needs=tickets', { collection: tickets, accessControl: { preset: 'team', sharing: true } }),
      brick('grants id=g needs=agent,tickets', {
        role: '${params.prefix}-agent',
        grants: [{ resource: `collections/${tickets}`, action: 'read' }],
      }),
      brick('records id=seed needs=tickets', { collection: tickets, rows: [{ slug: 'a', title: 'A' }] }),
      brick('view id=v needs=tickets', { name: '${params.prefix} open', collection: tickets, shared: true }),
      brick('nav id=n needs=tickets', {
        label: '${params.prefix} tickets',
        target: { kind: 'collection', ref: tickets },
      }),
      brick('webhook id=w needs=tickets', {
        name: '${params.prefix}_hook',
        collection: tickets,
        events: ['record.create'],
        url: 'https://hooks.example.com/x',
      }),
      brick('lens id=l needs=tickets', { name: '${params.prefix} lens', collection: tickets, fields: ['title'] }),
      brick('attachment id=at', { lensId: lens.id, collection: `${p}_notes`, placement: 'record', label: 'Counted' }),
      brick('renderer id=rd needs=tickets', {
        name: '${params.prefix} card',
        collection: tickets,
        kind: 'card',
        template: '<b>{{title}}</b>',
      }),
      brick('container id=ct', { name: '${params.prefix}_docs' }),
      brick('search-index id=si', {
        name: '${params.prefix}-search',
        sources: [{ collection: `${p}_notes`, fields: ['title'] }],
      }),
      brick('script id=sc', { name: '${params.prefix}_score', code: 'export default () => 1' }),
      brick('flow id=f needs=agent', flowBody('${params.prefix} counted', 'role:${params.prefix}-agent')),
    ]).replace('id: help-desk', 'id: counted-app')
    // An install of part of it first, so the plan reads a ledger too.
    const small = documentOf(base).replace('id: help-desk', 'id: counted-app')
    const installed = await server.request('POST', `${INSTALLS}?apply=true`, {
      token: owner.token,
      body: { source: small, params: { prefix: q } },
    })
    expect(installed.status, installed.text).toBe(201)

    const before = await rowCounts()
    expect(Object.keys(before).length).toBeGreaterThan(20)
    const result = await planAs(owner.token, rich, { prefix: q })
    expect(result.installable, JSON.stringify(result.verdicts.filter((v) => v.verdict === 'BLOCKED'))).toBe(true)
    expect(new Set(result.verdicts.map((v) => v.kind)).size).toBe(15)
    expect(result.baseline).not.toBeNull()
    expect(result.verdicts.filter((v) => v.verdict === 'NOOP').map((v) => v.brickId)).toEqual(['tickets', 'agent'])
    await planAs(owner.token, rich, { prefix: `${p}d` })
    expect(await rowCounts()).toEqual(before)
  })
})
