import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'
import { startSibling } from '../support/sibling.js'
import { accountWithGrants } from './collections-support.js'

/**
 * /api/v1/automate/quotas (automation spec "Quotas", "Limits") over real HTTP: the defaults, usage, the
 * manage-only PATCH with its validation, and max flows enforced on create, duplicate and import with a
 * typed 403 quota_exceeded naming the quota, its limit and the usage (also under concurrent creates).
 */

const QUOTAS = '/api/v1/automate/quotas'
const FLOWS = '/api/v1/automate/flows'
const defaults = {
  maxFlows: 50,
  maxConcurrentRuns: 5,
  maxExecutionMs: 30000,
  maxRunsPerHour: 500,
  maxAiTokensPerDay: 50000,
  maxEmailsPerDay: 200,
  maxScriptCpuMs: 5000,
  maxPendingRuns: 10000,
}
const flow = (name: string) => ({ name, triggerType: 'manual', triggerConfig: {}, operations: [] })

let server: TestServer
let owner: Account
let editor: Account
let updater: Account

const get = async (token = owner.token) => server.request('GET', QUOTAS, { token })
const patch = (body: unknown, token = owner.token) => server.request('PATCH', QUOTAS, { token, body })
const stored = async () => server.app.registry.system.db.selectFrom('automate_quotas').selectAll().execute()
// The projects' own flows: system-managed ones (decision 038) are not counted against maxFlows.
const flowCount = async () =>
  Number(
    (
      (await server.app.registry.system.db
        .selectFrom('flows')
        .select((eb: any) => eb.fn.countAll().as('n'))
        .where('system', 'is', null)
        .executeTakeFirstOrThrow()) as { n: unknown }
    ).n,
  )

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  editor = await createAccount(server, owner.token, { role: 'editor' })
  updater = await accountWithGrants(
    server,
    owner.token,
    ['read', 'create', 'update'].map((action) => ({ resource: 'system/automate', action })),
  )
})
afterAll(async () => {
  await server?.stop()
})

describe('GET /quotas', () => {
  it('answers the defaults and the usage (flows counted; runs, AI and email zero until their parts report)', async () => {
    const reply = await get(editor.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      data: {
        limits: defaults,
        usage: { flows: 0, concurrentRuns: 0, runsThisHour: 0, aiTokensToday: 0, emailsToday: 0, pendingRuns: 0 },
      },
    })
    expect((await server.request('POST', FLOWS, { token: owner.token, body: flow('one') })).status).toBe(201)
    expect((await get()).body.data.usage.flows).toBe(1)
  })

  it('takes usage from a provider the engine registers', async () => {
    const remove = server.app.services.quotas.addUsage(async () => ({ concurrentRuns: 3, runsThisHour: 42 }))
    try {
      expect((await get()).body.data.usage).toMatchObject({ flows: 1, concurrentRuns: 3, runsThisHour: 42 })
    } finally {
      remove()
    }
    expect((await get()).body.data.usage.concurrentRuns).toBe(0)
  })
})

describe('PATCH /quotas', () => {
  it('manage changes the limits sent; only the changed ones are stored; the engine reads them', async () => {
    const reply = await patch({ maxConcurrentRuns: 9, maxRunsPerHour: 1000 })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.limits).toEqual({ ...defaults, maxConcurrentRuns: 9, maxRunsPerHour: 1000 })
    expect(JSON.parse((await stored())[0]!.limits)).toEqual({ maxConcurrentRuns: 9, maxRunsPerHour: 1000 })
    expect((await get(editor.token)).body.data.limits.maxConcurrentRuns).toBe(9)
    expect((await server.app.services.quotas.limits(server.app.defaultProject.id)).maxRunsPerHour).toBe(1000)
    // Back to a default: nothing stored for it.
    await patch({ maxConcurrentRuns: 5, maxRunsPerHour: 500 })
    expect(JSON.parse((await stored())[0]!.limits)).toEqual({})
  })

  const bad: [string, unknown][] = [
    ['zero', { maxFlows: 0 }],
    ['negative', { maxConcurrentRuns: -1 }],
    ['fraction', { maxExecutionMs: 1.5 }],
    ['string', { maxEmailsPerDay: '10' }],
    ['unknown limit', { maxWidgets: 3 }],
    ['over the ceiling', { maxConcurrentRuns: 1_000_001 }],
    ['null', { maxFlows: null }],
  ]
  for (const [name, body] of bad) {
    it(`refuses ${name} with 422 validation_error and stores nothing`, async () => {
      const before = JSON.stringify(await stored())
      const reply = await patch(body)
      expect(reply.status, reply.text).toBe(422)
      expect(reply.body.error).toBe('validation_error')
      expect(JSON.stringify(await stored())).toBe(before)
    })
  }

  runScenarios(
    () => server,
    [
      { name: 'anonymous is 401', method: 'PATCH', path: QUOTAS, body: { maxFlows: 3 }, status: 401 },
      {
        name: 'update is not enough (manage)',
        method: 'PATCH',
        path: QUOTAS,
        as: () => updater.token,
        body: { maxFlows: 3 },
        status: 403,
        contains: { error: 'forbidden', message: expect.stringContaining('system/automate:manage') },
      },
      {
        name: 'editor cannot',
        method: 'PATCH',
        path: QUOTAS,
        as: () => editor.token,
        body: { maxFlows: 3 },
        status: 403,
      },
      { name: 'anonymous read is 401', method: 'GET', path: QUOTAS, status: 401 },
      {
        name: 'the deprecated alias',
        method: 'GET',
        path: '/api/automate/quotas',
        as: () => editor.token,
        status: 200,
        responseHeaders: { deprecation: 'true' },
      },
    ],
  )
})

describe('max flows', () => {
  it('create, duplicate and import stop at the limit with 403 quota_exceeded naming quota, limit and usage', async () => {
    const have = await flowCount()
    expect((await patch({ maxFlows: have + 1 })).status).toBe(200)
    const last = await server.request('POST', FLOWS, { token: owner.token, body: flow('last one') })
    expect(last.status, last.text).toBe(201)
    const refusals = [
      await server.request('POST', FLOWS, { token: owner.token, body: flow('one too many') }),
      await server.request('POST', `${FLOWS}/${last.body.data.id}/duplicate`, { token: owner.token, body: {} }),
      await server.request('POST', `${FLOWS}/import`, {
        token: owner.token,
        body: { format: 'plinth-flow-v1', ...flow('imported') },
      }),
    ]
    for (const reply of refusals) {
      expect(reply.status, reply.text).toBe(403)
      expect(reply.body).toEqual({
        error: 'quota_exceeded',
        message: expect.stringContaining('maxFlows'),
        details: { quota: 'maxFlows', limit: have + 1, usage: have + 1 },
      })
    }
    expect(await flowCount()).toBe(have + 1)
    // Replacing a draft by import (flowId) makes no new flow: allowed at the limit.
    const replace = await server.request('POST', `${FLOWS}/import?flowId=${last.body.data.id}`, {
      token: owner.token,
      body: { format: 'plinth-flow-v1', ...flow('replaced') },
    })
    expect(replace.status, replace.text).toBe(200)
    // Deleting one frees a place.
    expect((await server.request('DELETE', `${FLOWS}/${last.body.data.id}`, { token: owner.token })).status).toBe(200)
    expect((await server.request('POST', FLOWS, { token: owner.token, body: flow('fits again') })).status).toBe(201)
  })

  it('holds under concurrent creates', async () => {
    const have = await flowCount()
    await patch({ maxFlows: have + 3 })
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        server.request('POST', FLOWS, { token: owner.token, body: flow(`race ${i}`) }),
      ),
    )
    expect(replies.filter((r) => r.status === 201)).toHaveLength(3)
    expect(replies.filter((r) => r.status === 403 && r.body.error === 'quota_exceeded')).toHaveLength(5)
    expect(await flowCount()).toBe(have + 3)
    await patch({ maxFlows: 50 })
  })
})

describe.runIf(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL)(
  'two instances (PostgreSQL + Redis)',
  () => {
    let b: TestServer
    beforeAll(async () => {
      b = await startSibling(server, {})
    })
    afterAll(async () => {
      await b?.stop()
    })

    it('a quota changed on A applies on B at once; max flows holds across both', async () => {
      const projectId = server.app.defaultProject.id
      expect((await b.app.services.quotas.limits(projectId)).maxFlows).toBe(50) // cached on B
      const have = await flowCount()
      expect((await patch({ maxFlows: have + 2 })).status).toBe(200)
      expect((await b.app.services.quotas.limits(projectId)).maxFlows).toBe(have + 2)
      const replies = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          (i % 2 === 0 ? server : b).request('POST', FLOWS, { token: owner.token, body: flow(`two ${i}`) }),
        ),
      )
      expect(replies.filter((r) => r.status === 201)).toHaveLength(2)
      expect(await flowCount()).toBe(have + 2)
      await patch({ maxFlows: 50 })
    })

    it("B's cache of active flows drops when A activates or deactivates one", async () => {
      const created = await server.request('POST', FLOWS, { token: owner.token, body: flow('across') })
      const id = created.body.data.id as string
      const projectId = server.app.defaultProject.id
      const activeOnB = async () =>
        (await b.app.services.automate.lookup.activeByTrigger(projectId, 'manual')).map((f) => f.id)
      expect(await activeOnB()).not.toContain(id) // now cached on B
      await server.request('POST', `${FLOWS}/${id}/publish`, { token: owner.token, body: {} })
      expect(
        (await server.request('PATCH', `${FLOWS}/${id}/status`, { token: owner.token, body: { status: 'active' } }))
          .status,
      ).toBe(200)
      expect(await activeOnB()).toContain(id)
      await server.request('PATCH', `${FLOWS}/${id}/status`, { token: owner.token, body: { status: 'inactive' } })
      expect(await activeOnB()).not.toContain(id)
    })
  },
)
