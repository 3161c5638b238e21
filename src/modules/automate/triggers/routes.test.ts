import { describe, expect, it } from 'vitest'
import { createHttpApp } from '../../../http/create-http-app.js'
import { AppError } from '../../../lib/errors.js'
import type { RouteGuards } from '../../../lib/module.js'
import { principals } from '../../../lib/principal.js'
import { createTriggers } from './create-triggers.js'
import { fakeDeps, makeFlow, silentLog } from './fakes.js'

// The triggers' routes through the app's HTTP layer in process (no server): paths, aliases, status codes,
// bodies and headers. Over real HTTP with the flows and runs services: test/api/automate-triggers.test.ts.

const editor = principals.user(
  { homeProjectId: 'p1', userId: 'u1', roleId: 'r1', roleName: 'editor', superAdmin: false },
  { id: 's', expiresAt: 2e9 },
)

async function setup() {
  const { deps, flows, runs } = fakeDeps({
    authorize: async (principal) => {
      if (principal.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to do this')
    },
  })
  const hook = makeFlow('webhook', { allowed_methods: ['POST', 'GET'], require_auth: true, secret: 'whsec-1' })
  const manual = makeFlow('manual', { input_fields: [{ name: 'n', type: 'number', required: true }] })
  const endpoint = makeFlow('api_endpoint', { method: 'PUT' })
  for (const flow of [hook, manual, endpoint]) await flows.put(flow)
  const triggers = await createTriggers(deps)
  const security = {
    authenticate: async (c: { req: { header(name: string): string | undefined } }) =>
      c.req.header('authorization') === 'Bearer editor' ? editor : principals.anonymous('p1'),
    authorize: deps.authorize,
  }
  const guards = { security, readSecurity: security } as unknown as RouteGuards
  const app = createHttpApp({
    log: silentLog,
    version: 'test',
    publicUrl: 'http://localhost',
    corsOrigins: [],
    maxBodyBytes: 1_000_000,
    routers: triggers.routers(guards),
  })
  const request = async (
    method: string,
    path: string,
    init: { body?: string; headers?: Record<string, string> } = {},
  ) => {
    const response = await app.request(path, { method, body: init.body, headers: init.headers })
    const text = await response.text()
    return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as any) : null }
  }
  return { request, runs, hook, manual, endpoint, close: () => triggers.close() }
}

const json = { 'content-type': 'application/json' }

describe('trigger routes', () => {
  it('webhook: 202 { success, runId, message } on v1 and the alias; JSON, form, text and query bodies', async () => {
    const t = await setup()
    try {
      const url = `/api/v1/automate/webhook/${t.hook.webhookToken}`
      const auth = { authorization: 'Bearer whsec-1' }
      const posted = await t.request('POST', url, { body: '{"a":1}', headers: { ...json, ...auth } })
      expect(posted).toMatchObject({
        status: 202,
        body: { success: true, runId: 'run1', message: 'Flow execution started' },
      })
      expect(
        (
          await t.request('POST', `/api/automate/webhook/${t.hook.webhookToken}`, {
            body: 'a=1&a=2&b=x',
            headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth },
          })
        ).status,
      ).toBe(202)
      expect(
        (await t.request('POST', url, { body: 'plain words', headers: { 'content-type': 'text/plain', ...auth } }))
          .status,
      ).toBe(202)
      expect((await t.request('POST', url, { headers: auth })).status).toBe(202)
      expect((await t.request('GET', `${url}?q=1&tag=a&tag=b`, { headers: { authorization: 'whsec-1' } })).status).toBe(
        202,
      )
      expect(t.runs.calls.map((c) => [c.trigger.method, c.trigger.body])).toEqual([
        ['POST', { a: 1 }],
        ['POST', { a: ['1', '2'], b: 'x' }],
        ['POST', 'plain words'],
        ['POST', {}],
        ['GET', { q: '1', tag: ['a', 'b'] }],
      ])
      const wrongMethod = await t.request('PATCH', url, { body: '{}', headers: { ...json, ...auth } })
      expect(wrongMethod).toMatchObject({ status: 405, body: { error: 'method_not_allowed' } })
      expect(wrongMethod.headers.get('allow')).toBe('POST, GET')
      expect(await t.request('POST', url, { body: '{}', headers: json })).toMatchObject({
        status: 401,
        body: { error: 'unauthorized' },
      })
      expect(await t.request('POST', url, { body: '{"a":', headers: { ...json, ...auth } })).toMatchObject({
        status: 400,
        body: { error: 'invalid_request' },
      })
      expect(await t.request('POST', '/api/v1/automate/webhook/nope', { body: '{}', headers: json })).toMatchObject({
        status: 404,
        body: { error: 'not_found' },
      })
      expect(t.runs.calls).toHaveLength(5)
    } finally {
      await t.close()
    }
  })

  it('manual: 202 with the run for a signed-in caller, 422 for input that does not fit, 401 anonymous', async () => {
    const t = await setup()
    try {
      const url = `/api/v1/automate/flows/${t.manual.id}/trigger`
      const headers = { ...json, authorization: 'Bearer editor' }
      expect(await t.request('POST', url, { body: '{"input":{"n":"x"}}', headers })).toMatchObject({
        status: 422,
        body: { error: 'validation_error', details: { field: 'input.n' } },
      })
      expect(await t.request('POST', url, { body: '{"extra":1}', headers })).toMatchObject({
        status: 400,
        body: { error: 'invalid_request' },
      })
      expect(await t.request('POST', url, { body: '{"input":{"n":1}}', headers: json })).toMatchObject({ status: 401 })
      expect(await t.request('POST', url, { body: '{"input":{"n":1}}', headers })).toMatchObject({
        status: 202,
        body: { data: { runId: 'run1', flowId: t.manual.id, status: 'running' } },
      })
      expect(t.runs.calls[0]).toMatchObject({ initiator: editor, trigger: { body: { input: { n: 1 } } } })
    } finally {
      await t.close()
    }
  })

  it('api_endpoint: its method only (405 with Allow), 401 anonymous when require_auth, 202 for the caller', async () => {
    const t = await setup()
    try {
      const url = `/api/v1/automate/endpoint/${t.endpoint.id}`
      expect(await t.request('PUT', url, { body: '{"x":1}', headers: json })).toMatchObject({ status: 401 })
      const wrong = await t.request('POST', url, { body: '{}', headers: { ...json, authorization: 'Bearer editor' } })
      expect(wrong.status).toBe(405)
      expect(wrong.headers.get('allow')).toBe('PUT')
      expect(
        await t.request('PUT', url, { body: '{"x":1}', headers: { ...json, authorization: 'Bearer editor' } }),
      ).toMatchObject({ status: 202, body: { data: { runId: 'run1' } } })
      expect(
        await t.request('PUT', '/api/automate/endpoint/missing', {
          body: '{}',
          headers: { ...json, authorization: 'Bearer editor' },
        }),
      ).toMatchObject({ status: 404 })
    } finally {
      await t.close()
    }
  })
})
