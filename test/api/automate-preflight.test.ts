import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, roleId, setGrants, signUpOwner, type Account } from '../support/identity.js'
import { AUTOMATE } from './automate-support.js'

/**
 * The flow preflight (issue 26 item 3, decision 053), tried as a new user would: a webhook flow creating a
 * note answered 202 to every call while every run failed unauthorized, and nothing said why. Publish and
 * activation now answer warnings (never a refusal) for each step need whom the runs act as lacks, per
 * trigger identity; the flow detail carries them too. Also: send_notification with a recipient that resolves
 * empty fails instead of notifying the run's own user, and a dry run runs a script with no effects.
 */
let server: TestServer
let owner: Account
/** Holds system/automate read, create, update, execute and nothing on notes. */
let automator: Account
let writerRole: string
let readerRole: string

const call = (method: string, path: string, token: string, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token, ...(body === undefined ? {} : { body }) })

async function ok(reply: Promise<Reply>, status = 200): Promise<any> {
  const done = await reply
  expect(done.status, done.text).toBe(status)
  return done.body
}

const createNote = {
  key: 'save',
  type: 'crud_create',
  config: { collection: 'notes', data: { title: '{{$trigger.body.title}}' } },
}

async function draft(
  token: string,
  triggerType: string,
  operations: unknown[],
  triggerConfig: Record<string, unknown> = {},
): Promise<any> {
  return (
    await ok(
      call('POST', `${AUTOMATE}/flows`, token, {
        name: `Preflight ${triggerType}`,
        triggerType,
        triggerConfig,
        operations,
      }),
      201,
    )
  ).data
}

async function publish(token: string, id: string): Promise<{ version: number; warnings: any[] }> {
  return (await ok(call('POST', `${AUTOMATE}/flows/${id}/publish`, token, { changeSummary: 'preflight' }))).data
}

async function runsOf(flowId: string, atLeast: number): Promise<any[]> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const list = (await ok(call('GET', `${AUTOMATE}/flows/${flowId}/runs?limit=100`, owner.token))).data as any[]
    const runs = await Promise.all(
      list.map(async (r) => (await ok(call('GET', `${AUTOMATE}/runs/${r.runId}`, owner.token))).data),
    )
    if (runs.length >= atLeast && runs.every((r) => !['pending', 'running'].includes(r.status))) return runs.reverse()
    if (Date.now() > deadline) throw new Error(`runs of ${flowId} did not end`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

beforeAll(async () => {
  server = await startServer({ REDIS_URL: '' })
  owner = await signUpOwner(server)
  await ok(
    call('POST', '/api/v1/collections', owner.token, {
      name: 'notes',
      fields: [{ name: 'title', type: 'text', required: false }],
    }),
    201,
  )
  for (const name of ['automator', 'writer', 'reader'])
    await ok(call('POST', '/api/v1/roles', owner.token, { name }), 201)
  await setGrants(
    server,
    owner.token,
    'automator',
    ['read', 'create', 'update', 'execute'].map((action) => ({ resource: 'system/automate', action })),
  )
  await setGrants(server, owner.token, 'writer', [{ resource: 'collections/notes', action: 'create' }])
  await setGrants(server, owner.token, 'reader', [{ resource: 'collections/notes', action: 'read' }])
  automator = await createAccount(server, owner.token, { role: 'automator' })
  writerRole = await roleId(server, owner.token, 'writer')
  readerRole = await roleId(server, owner.token, 'reader')
})
afterAll(async () => {
  await server?.stop()
})

describe('a webhook flow runs as the public role by default: the preflight says so', () => {
  it('publish answers the version with a permission_missing warning naming the step, the permission and the fix; detail and activation carry it', async () => {
    const flow = await draft(owner.token, 'webhook', [createNote])
    expect(flow.warnings).toEqual([]) // nothing published yet
    const published = await publish(owner.token, flow.id)
    expect(published.version).toBe(1)
    expect(published.warnings).toEqual([
      {
        code: 'permission_missing',
        step: 'save',
        type: 'crud_create',
        permission: 'collections/notes:create',
        collection: 'notes',
        runsAs: 'the anonymous caller (role public)',
        message: expect.stringContaining('webhook run acts for nobody'),
        fix: expect.stringContaining('runAs'),
      },
    ])
    expect((await ok(call('GET', `${AUTOMATE}/flows/${flow.id}`, owner.token))).data.warnings).toEqual(
      published.warnings,
    )
    const active = (await ok(call('PATCH', `${AUTOMATE}/flows/${flow.id}/status`, owner.token, { status: 'active' })))
      .data
    expect(active.warnings).toEqual(published.warnings)

    // The warning is true: the call is accepted, the run fails as the anonymous caller.
    const token = active.webhookEndpoint.token
    expect((await server.request('POST', `${AUTOMATE}/webhook/${token}`, { body: { title: 'one' } })).status).toBe(202)
    const [failed] = await runsOf(flow.id, 1)
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'unauthorized', step: 'save' } })

    // The fix it names: a role holding notes:create. The warning goes, and the next call creates the note.
    await ok(call('PATCH', `${AUTOMATE}/flows/${flow.id}`, owner.token, { runAs: `role:${writerRole}` }))
    expect((await publish(owner.token, flow.id)).warnings).toEqual([])
    expect((await ok(call('GET', `${AUTOMATE}/flows/${flow.id}`, owner.token))).data.warnings).toEqual([])
    expect((await server.request('POST', `${AUTOMATE}/webhook/${token}`, { body: { title: 'two' } })).status).toBe(202)
    const runs = await runsOf(flow.id, 2)
    expect(runs[1]).toMatchObject({ status: 'completed' })
  })

  it('nested steps are named by their own key', async () => {
    const loop = {
      key: 'each',
      type: 'loop',
      config: { items: '{{$trigger.body.titles}}', operations: [{ ...createNote, key: 'saveOne' }] },
    }
    const flow = await draft(owner.token, 'webhook', [loop])
    expect((await publish(owner.token, flow.id)).warnings).toEqual([
      expect.objectContaining({ code: 'permission_missing', step: 'saveOne', permission: 'collections/notes:create' }),
    ])
  })

  it('an api_endpoint open to anonymous calls is checked as the public role too; one that needs a credential depends on its caller', async () => {
    const open = await draft(owner.token, 'api_endpoint', [createNote], { method: 'POST', require_auth: false })
    expect((await publish(owner.token, open.id)).warnings).toEqual([
      expect.objectContaining({ code: 'permission_missing', runsAs: 'the anonymous caller (role public)' }),
    ])
    const closed = await draft(owner.token, 'api_endpoint', [createNote], { method: 'POST', require_auth: true })
    expect((await publish(owner.token, closed.id)).warnings).toEqual([
      expect.objectContaining({ code: 'runs_as_unknown' }),
    ])
  })

  it('at most 50 warnings', async () => {
    const steps = Array.from({ length: 60 }, (_, i) => ({ ...createNote, key: `save${i}` }))
    const flow = await draft(owner.token, 'webhook', steps)
    const { warnings } = await publish(owner.token, flow.id)
    expect(warnings).toHaveLength(50)
    expect(warnings[49].step).toBe('save49')
  })
})

describe('each trigger identity', () => {
  it('a publisher lacking the right: publisher_permission_missing (a schedule acts as the publisher; any run stays within them); publish is never refused', async () => {
    const schedule = await draft(automator.token, 'schedule', [createNote], { cron: '0 0 1 1 *', timezone: 'UTC' })
    const published = await publish(automator.token, schedule.id)
    expect(published.warnings).toEqual([
      expect.objectContaining({
        code: 'publisher_permission_missing',
        step: 'save',
        permission: 'collections/notes:create',
        runsAs: expect.stringContaining('publisher'),
        fix: expect.stringContaining('publish the flow as someone who holds'),
      }),
    ])
    // A manual flow: whoever sets it off is unknown, but the automator as publisher is already too little.
    const manual = await draft(automator.token, 'manual', [createNote])
    expect((await publish(automator.token, manual.id)).warnings).toEqual([
      expect.objectContaining({ code: 'publisher_permission_missing' }),
    ])
    // The same flow published by the owner: only the caller, unknown ahead, decides.
    expect((await publish(owner.token, manual.id)).warnings).toEqual([
      expect.objectContaining({
        code: 'runs_as_unknown',
        step: 'save',
        permission: 'collections/notes:create',
        runsAs: expect.stringContaining('whoever sets it off'),
      }),
    ])
  })

  it('a delegated role lacking the right: permission_missing naming the role and the grant to add', async () => {
    const flow = await draft(owner.token, 'manual', [
      createNote,
      { key: 'list', type: 'crud_read', config: { collection: 'notes' } },
    ])
    await ok(call('PATCH', `${AUTOMATE}/flows/${flow.id}`, owner.token, { runAs: `role:${readerRole}` }))
    const { warnings } = await publish(owner.token, flow.id)
    expect(warnings).toEqual([
      expect.objectContaining({
        code: 'permission_missing',
        step: 'save',
        permission: 'collections/notes:create',
        runsAs: `the role reader (runAs role:${readerRole})`,
        fix: expect.stringContaining('grant collections/notes:create to the role reader'),
      }),
    ])
  })

  it("a flow owner lacking the right (runAs flow_owner): permission_missing naming the owner's role", async () => {
    // A manager may delegate to itself (flow_owner) but holds only notes:read.
    await ok(call('POST', '/api/v1/roles', owner.token, { name: 'manager' }), 201)
    await setGrants(server, owner.token, 'manager', [
      ...['read', 'create', 'update', 'execute', 'manage'].map((action) => ({ resource: 'system/automate', action })),
      { resource: 'collections/notes', action: 'read' },
    ])
    const manager = await createAccount(server, owner.token, { role: 'manager' })
    const flow = await draft(manager.token, 'webhook', [createNote])
    await ok(call('PATCH', `${AUTOMATE}/flows/${flow.id}`, manager.token, { runAs: 'flow_owner' }))
    expect((await publish(manager.token, flow.id)).warnings).toEqual([
      expect.objectContaining({
        code: 'permission_missing',
        step: 'save',
        runsAs: 'the flow owner (role manager)',
        fix: expect.stringContaining('grant collections/notes:create to the role manager'),
      }),
    ])
  })

  it('the triggering user: runs_as_unknown, said once per step need', async () => {
    const flow = await draft(owner.token, 'event_action', [createNote], { events: ['record.create'] })
    expect((await publish(owner.token, flow.id)).warnings).toEqual([
      expect.objectContaining({
        code: 'runs_as_unknown',
        step: 'save',
        runsAs: expect.stringContaining('whoever caused the event'),
      }),
    ])
  })

  it('a collection the project lacks (a flow imported from elsewhere): collection_missing', async () => {
    const document = {
      format: 'plinth-flow-v1',
      name: 'Imported',
      triggerType: 'schedule',
      triggerConfig: { cron: '0 0 1 1 *', timezone: 'UTC' },
      operations: [{ key: 'keep', type: 'crud_create', config: { collection: 'tickets', data: {} } }],
    }
    const imported = (await ok(call('POST', `${AUTOMATE}/flows/import`, owner.token, document), 201)).data
    const { warnings } = await publish(owner.token, imported.id)
    expect(warnings).toEqual([
      expect.objectContaining({
        code: 'collection_missing',
        step: 'keep',
        collection: 'tickets',
        permission: 'collections/tickets:create',
        fix: expect.stringContaining('create the collection tickets'),
      }),
    ])
    // Once it exists, the warning is gone (the detail is checked as things are now).
    await ok(
      call('POST', '/api/v1/collections', owner.token, {
        name: 'tickets',
        fields: [{ name: 'title', type: 'text', required: false }],
      }),
      201,
    )
    expect((await ok(call('GET', `${AUTOMATE}/flows/${imported.id}`, owner.token))).data.warnings).toEqual([])
  })
})

describe('send_notification with a recipient that resolves empty', () => {
  it("fails notification_recipient_empty and notifies nobody, never the run's own user", async () => {
    const flow = await draft(owner.token, 'manual', [
      {
        key: 'tell',
        type: 'send_notification',
        config: { title: 'Ticket', message: 'assigned to you', userId: '{{$trigger.body.assignee}}' },
      },
    ])
    await publish(owner.token, flow.id)
    await ok(call('PATCH', `${AUTOMATE}/flows/${flow.id}/status`, owner.token, { status: 'active' }))
    const before = (await ok(call('GET', '/api/v1/notifications', owner.token))).data.length
    expect((await call('POST', `${AUTOMATE}/flows/${flow.id}/execute`, owner.token, { assignee: '' })).status).toBe(202)
    const [run] = await runsOf(flow.id, 1)
    expect(run).toMatchObject({ status: 'failed', error: { code: 'notification_recipient_empty', step: 'tell' } })
    expect((await ok(call('GET', '/api/v1/notifications', owner.token))).data.length).toBe(before)
  })
})

describe('a dry run runs what has no effects outside the run', () => {
  it('a run_script without network runs; one with allowed_domains is recorded as not run', async () => {
    const flow = await draft(owner.token, 'manual', [
      { key: 'pure', type: 'run_script', config: { code: 'return input.n * 2', input: { n: 21 } } },
      { key: 'online', type: 'run_script', config: { code: 'return 1', allowed_domains: ['api.example.com'] } },
      { key: 'save', type: 'crud_create', config: { collection: 'notes', data: { title: 'dry' } } },
    ])
    const trace = (await ok(call('POST', `${AUTOMATE}/flows/${flow.id}/test`, owner.token, {}))).data
    const byKey = Object.fromEntries(trace.steps.map((s: any) => [s.key, s]))
    expect(byKey.pure).toMatchObject({ status: 'completed', output: { output: 42 } })
    expect(byKey.online.status).toBe('skipped')
    expect(byKey.save.status).toBe('skipped')
    const notes = (await ok(call('GET', '/api/v1/collections/notes/records?limit=100', owner.token))).data as any[]
    expect(notes.map((n) => n.title)).not.toContain('dry')
  })
})
