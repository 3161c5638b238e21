import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'

/**
 * Security review (issue 25, deliver 5): trigger_flow and the another_flow trigger never cross a project.
 * Three projects: home (the owner's, a super_admin), A and B. Flows of A name another_flow flows of B and
 * of home (the publisher's own home project) by id, run as a user of A, as the super_admin who published
 * them (acting in A), and from API keys; a sub-flow chain of A tries to leave A on its second level. Each
 * is not_found and nothing runs in the other project. The same flows naming a flow of A run it (the
 * control: the not_found is the project's boundary, nothing else). Runs of one project, with their
 * `$trigger` payloads, are missing in every other project.
 */
const BASE = '/api/v1/automate'
let server: TestServer
let owner: Account
let homeId: string
let aId: string
let bId: string
/** An editor of project A (may execute flows there). */
let alice: { id: string; token: string }
/** A user of project B, and the secret its runs carry in $trigger.body. */
let bUser: { id: string; token: string }
const secret = `secret-${randomBytes(6).toString('hex')}`

/** The another_flow targets: one per project, each echoing its $trigger. */
const targets: Record<'home' | 'a' | 'b', string> = { home: '', a: '', b: '' }

const inProject = (projectId: string) => ({ 'X-Project-Id': projectId })
/** A request as `token`, in `projectId` when given (X-Project-Id: the owner acting there, or an API key of a super_admin). */
const call = (method: string, path: string, token: string, body?: unknown, projectId?: string): Promise<Reply> =>
  server.request(method, path, { token, body, headers: projectId ? inProject(projectId) : {} })

/** Creates, publishes and activates a flow as the owner acting in `projectId`; answers its id. */
async function activeFlow(
  projectId: string,
  name: string,
  triggerType: string,
  operations: unknown[],
  runAs?: string,
): Promise<string> {
  const created = await call(
    'POST',
    `${BASE}/flows`,
    owner.token,
    { name, triggerType, triggerConfig: {}, operations },
    projectId,
  )
  expect(created.status, created.text).toBe(201)
  const id = created.body.data.id as string
  if (runAs) {
    const patched = await call('PATCH', `${BASE}/flows/${id}`, owner.token, { runAs }, projectId)
    expect(patched.status, patched.text).toBe(200)
  }
  expect(
    (await call('POST', `${BASE}/flows/${id}/publish`, owner.token, { changeSummary: 'v1' }, projectId)).status,
  ).toBe(200)
  expect((await call('PATCH', `${BASE}/flows/${id}/status`, owner.token, { status: 'active' }, projectId)).status).toBe(
    200,
  )
  return id
}

/** Waits until the run has ended and answers its detail, read by the owner in the run's project. */
async function finished(runId: string, projectId: string): Promise<any> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const run = (await call('GET', `${BASE}/runs/${runId}`, owner.token, undefined, projectId)).body.data
    if (run && !['pending', 'running'].includes(run.status)) return run
    if (Date.now() > deadline) throw new Error(`run ${runId} did not end: ${JSON.stringify(run)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** Starts `flowId` of project A as `token` (with X-Project-Id A when `there`) and answers the finished run. */
async function executeInA(flowId: string, token: string, body: unknown, there = false): Promise<any> {
  const started = await call('POST', `${BASE}/flows/${flowId}/execute`, token, body, there ? aId : undefined)
  expect(started.status, started.text).toBe(202)
  return finished(started.body.data.runId, aId)
}

/** Every run of the project, as the owner acting there. */
async function runsIn(projectId: string): Promise<any[]> {
  const reply = await call('GET', `${BASE}/runs?limit=100`, owner.token, undefined, projectId)
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

const stepOf = (run: any, key: string) => run.stepLogs.find((log: any) => log.key === key)
const trigger = (flowId: string, extra: Record<string, unknown> = {}) => ({
  key: 'go',
  type: 'trigger_flow',
  config: { flowId, data: { secret }, ...extra },
})
const echo = { key: 'echo', type: 'set_variable', config: { key: 'echo', value: '{{= $trigger }}' } }

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  homeId = server.app.defaultProject.id
  for (const name of ['A', 'B'] as const) {
    const project = await call('POST', '/api/v1/projects', owner.token, { name: `Project ${name}` })
    expect(project.status, project.text).toBe(201)
    if (name === 'A') aId = project.body.data.id
    else bId = project.body.data.id
  }
  /** A user of `projectId` with a built-in role of that project, signed in. */
  const person = async (projectId: string, role: string) => {
    const email = `${role}-${randomBytes(4).toString('hex')}@example.com`
    const made = await call(
      'POST',
      '/api/v1/users',
      owner.token,
      { email, password: 'a good password', name: role, role },
      projectId,
    )
    expect(made.status, made.text).toBe(201)
    expect(made.body.data.projectId).toBe(projectId)
    const signedIn = await server.request('POST', '/api/auth/sign-in/email', {
      body: { email, password: 'a good password' },
    })
    expect(signedIn.status, signedIn.text).toBe(200)
    return { id: made.body.data.id as string, token: signedIn.body.token as string }
  }
  alice = await person(aId, 'editor')
  bUser = await person(bId, 'editor')
  targets.home = await activeFlow(homeId, 'Home target', 'another_flow', [echo])
  targets.a = await activeFlow(aId, 'A target', 'another_flow', [echo])
  targets.b = await activeFlow(bId, 'B target', 'another_flow', [echo])
})
afterAll(async () => {
  await server?.stop()
})

describe('trigger_flow naming a flow of another project', () => {
  /** Nothing ran in home or B, and no run there carries the secret. */
  async function nothingRanOutsideA(): Promise<void> {
    for (const projectId of [homeId, bId]) {
      const runs = await runsIn(projectId)
      expect(runs.filter((r) => r.flowId === targets.home || r.flowId === targets.b)).toEqual([])
      expect(JSON.stringify(runs)).not.toContain(secret)
    }
  }

  /** `runAs` of the flow in A × who starts it: each row runs the attack (B's and home's target) and the control (A's target). */
  const starters: [
    string,
    string | undefined,
    () => Promise<{ token: string; there: boolean }>,
    () => Record<string, unknown>,
  ][] = [
    [
      'an editor of A (runAs triggering_user)',
      undefined,
      async () => ({ token: alice.token, there: false }),
      () => ({ kind: 'user', userId: alice.id }),
    ],
    [
      'an editor of A, the flow running as its publisher, a super_admin acting in A (runAs flow_owner)',
      'flow_owner',
      async () => ({ token: alice.token, there: false }),
      () => ({ kind: 'user', userId: owner.id }),
    ],
    [
      'the super_admin itself, acting in A with X-Project-Id',
      undefined,
      async () => ({ token: owner.token, there: true }),
      () => ({ kind: 'user', userId: owner.id }),
    ],
    [
      'an API key of the editor of A',
      undefined,
      async () => {
        const key = await call('POST', '/api/auth/api-keys', alice.token, {
          label: 'runner',
          capabilities: ['system/automate:read', 'system/automate:execute'],
        })
        expect(key.status, key.text).toBe(201)
        return { token: key.body.raw as string, there: false }
      },
      () => ({ kind: 'api_key', userId: alice.id }),
    ],
    [
      'an API key of the super_admin, used in A with X-Project-Id',
      undefined,
      async () => {
        const key = await call(
          'POST',
          '/api/auth/api-keys',
          owner.token,
          { label: 'owner in A', capabilities: ['system/automate:read', 'system/automate:execute'] },
          aId,
        )
        expect(key.status, key.text).toBe(201)
        return { token: key.body.raw as string, there: true }
      },
      () => ({ kind: 'api_key', userId: owner.id }),
    ],
  ]

  it.each(starters)(
    "started by %s: not_found for B's and home's flow, awaited or async; A's own runs",
    async (_name, runAs, starter, acting) => {
      const { token, there } = await starter()
      for (const mode of [{}, { async: true }]) {
        const flowId = await activeFlow(
          aId,
          'Reaches out',
          'manual',
          [trigger('{{$trigger.body.target}}', mode)],
          runAs,
        )
        for (const target of [targets.b, targets.home]) {
          const run = await executeInA(flowId, token, { target }, there)
          expect(run.actingAs, JSON.stringify(mode)).toMatchObject(acting())
          expect(run.status, JSON.stringify(mode)).toBe('failed')
          expect(run.error, JSON.stringify(mode)).toMatchObject({ code: 'not_found', step: 'go' })
        }
        await nothingRanOutsideA()
        // The control: the same flow, the same starter, A's own target runs (with the data it was given).
        const control = await executeInA(flowId, token, { target: targets.a }, there)
        expect(control.status, JSON.stringify(control.error)).toBe('completed')
        const subRun = await finished(stepOf(control, 'go').output.runId, aId)
        expect(subRun).toMatchObject({ flowId: targets.a, status: 'completed' })
        expect(stepOf(subRun, 'echo').output).toMatchObject({ body: { secret } })
      }
    },
  )

  it("a sub-flow chain cannot leave A on a deeper level: A → A's middle flow → B is not_found, nothing runs in B", async () => {
    const middle = await activeFlow(aId, 'Middle', 'another_flow', [trigger('{{$trigger.body.target}}')])
    const top = await activeFlow(
      aId,
      'Top',
      'manual',
      [{ key: 'down', type: 'trigger_flow', config: { flowId: middle, data: { target: '{{$trigger.body.target}}' } } }],
      'flow_owner',
    )
    for (const target of [targets.b, targets.home]) {
      const run = await executeInA(top, alice.token, { target })
      expect(run.status).toBe('failed')
      expect(run.error).toMatchObject({ code: 'subflow_failed', step: 'down' })
      const middleRun = await finished(stepOf(run, 'down').error.details.runId, aId)
      expect(middleRun).toMatchObject({
        flowId: middle,
        depth: 1,
        status: 'failed',
        error: { code: 'not_found', step: 'go' },
      })
    }
    await nothingRanOutsideA()
    const control = await executeInA(top, alice.token, { target: targets.a })
    expect(control.status, JSON.stringify(control.error)).toBe('completed')
  })
})

describe('the another_flow trigger takes runs from its own project only', () => {
  it("B's another_flow flow cannot be started, tested or called from A, by A's editor or the super_admin acting in A (404)", async () => {
    const attempts: [string, string, unknown][] = [
      ['POST', `${BASE}/flows/${targets.b}/execute`, { secret }],
      ['POST', `${BASE}/flows/${targets.b}/trigger`, {}],
      ['POST', `${BASE}/flows/${targets.b}/test`, { secret }],
      ['POST', `${BASE}/endpoint/${targets.b}`, { secret }],
      ['GET', `${BASE}/flows/${targets.b}`, undefined],
    ]
    for (const [method, path, body] of attempts) {
      for (const [token, there] of [
        [alice.token, false],
        [owner.token, true],
      ] as const) {
        const reply = await call(method, path, token, body, there ? aId : undefined)
        expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(404)
        expect(reply.body).toMatchObject({ error: 'not_found' })
      }
    }
    expect((await runsIn(bId)).filter((r) => r.flowId === targets.b)).toEqual([])
  })
})

describe('runs and their $trigger payloads stay in their project', () => {
  let bRun: any

  beforeAll(async () => {
    // A run in B whose $trigger.body (and step output) holds the secret.
    const flowId = await activeFlow(bId, 'B manual', 'manual', [echo])
    const started = await call('POST', `${BASE}/flows/${flowId}/execute`, bUser.token, { secret })
    expect(started.status, started.text).toBe(202)
    bRun = await finished(started.body.data.runId, bId)
    expect(bRun.status, JSON.stringify(bRun.error)).toBe('completed')
    expect(JSON.stringify(bRun)).toContain(secret)
  })

  it("A's run lists (all, by flow, by status) do not show B's run, for A's editor or the super_admin in A", async () => {
    for (const [token, there] of [
      [alice.token, false],
      [owner.token, true],
    ] as const) {
      for (const path of [
        `${BASE}/runs?limit=100`,
        `${BASE}/runs?limit=100&status=completed`,
        `${BASE}/runs?limit=100&flow_id=${bRun.flowId}`,
      ]) {
        const reply = await call('GET', path, token, undefined, there ? aId : undefined)
        expect(reply.status, reply.text).toBe(200)
        expect(reply.body.data.map((r: any) => r.runId)).not.toContain(bRun.runId)
        expect(reply.text).not.toContain(secret)
      }
      const ofFlow = await call('GET', `${BASE}/flows/${bRun.flowId}/runs`, token, undefined, there ? aId : undefined)
      expect(ofFlow.status, ofFlow.text).toBe(404)
      expect(ofFlow.text).not.toContain(secret)
    }
    // Nor the home project's lists (the super_admin's own).
    const home = await call('GET', `${BASE}/runs?limit=100`, owner.token)
    expect(home.body.data.map((r: any) => r.runId)).not.toContain(bRun.runId)
    expect(home.text).not.toContain(secret)
  })

  it("B's run is missing from A: A's editor cannot read it, the super_admin in A cannot read, cancel or delete it (404), and it stays", async () => {
    const read = await call('GET', `${BASE}/runs/${bRun.runId}`, alice.token)
    expect(read.status, read.text).toBe(404)
    expect(read.text).not.toContain(secret)
    for (const [method, path] of [
      ['GET', `${BASE}/runs/${bRun.runId}`],
      ['POST', `${BASE}/runs/${bRun.runId}/cancel`],
      ['DELETE', `${BASE}/runs/${bRun.runId}`],
    ] as const) {
      const reply = await call(method, path, owner.token, method === 'POST' ? {} : undefined, aId)
      expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(404)
      expect(reply.text).not.toContain(secret)
    }
    const still = await call('GET', `${BASE}/runs/${bRun.runId}`, bUser.token)
    expect(still.status, still.text).toBe(200)
    expect(still.body.data).toMatchObject({ runId: bRun.runId, status: 'completed' })
  })
})
