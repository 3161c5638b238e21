import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { callWebhook, type WebhookCall } from './webhook.js'
import { ipAllowed, secretMatches } from './webhook-access.js'
import { createFakeFlows, createFakeRuns, makeFlow } from './fakes.js'

describe('webhook secret', () => {
  it.each([
    ['Bearer s3cret', 's3cret', true],
    ['s3cret', 's3cret', true],
    ['  Bearer s3cret ', 's3cret', true],
    ['Bearer wrong', 's3cret', false],
    ['s3cre', 's3cret', false],
    ['Bearer s3cret2', 's3cret', false],
    ['Basic czNjcmV0', 's3cret', false],
    ['', 's3cret', false],
    [undefined, 's3cret', false],
    ['Bearer s3cret', undefined, false],
  ] as const)('%j against %j: %s', (header, secret, ok) => {
    expect(secretMatches(header, secret)).toBe(ok)
  })
})

describe('webhook ip_allowlist', () => {
  it.each([
    ['203.0.113.9', [], true],
    ['203.0.113.9', ['203.0.113.0/24'], true],
    ['203.0.114.9', ['203.0.113.0/24'], false],
    ['203.0.113.9', ['198.51.100.1', '203.0.113.9'], true],
    ['::ffff:203.0.113.9', ['203.0.113.0/24'], true],
    ['2001:db8::1', ['2001:db8::/32'], true],
    ['2001:db9::1', ['2001:db8::/32'], false],
    ['203.0.113.9', ['2001:db8::/32'], false],
    ['unknown', ['203.0.113.0/24'], false],
  ] as const)('%s in %j: %s', (ip, list, ok) => {
    expect(ipAllowed(ip, list)).toBe(ok)
  })
})

describe('webhook calls', () => {
  const secured = makeFlow('webhook', {
    allowed_methods: ['POST', 'GET'],
    require_auth: true,
    secret: 's3cret',
    ip_allowlist: ['203.0.113.0/24'],
  })
  const open = makeFlow('webhook', {})
  const inactive = makeFlow('webhook', {}, { status: 'inactive' })
  const notWebhook = makeFlow('manual', {})

  function setup() {
    const flows = createFakeFlows([secured, open, inactive, notWebhook])
    const runs = createFakeRuns()
    return { deps: { flows: flows.lookup, runs: runs.runs }, runs }
  }
  const call = (over: Partial<WebhookCall>): WebhookCall => ({
    token: secured.webhookToken,
    method: 'POST',
    ip: '203.0.113.5',
    authorization: 'Bearer s3cret',
    input: async () => ({ order: 42 }),
    ...over,
  })
  async function refusal(promise: Promise<unknown>) {
    try {
      await promise
    } catch (err) {
      if (err instanceof AppError) return { status: err.status, code: err.code, headers: err.headers }
      throw err
    }
    return null
  }

  it('starts a run with the body and method as $trigger and no initiator', async () => {
    const { deps, runs } = setup()
    expect(await callWebhook(deps, call({}))).toEqual({ runId: 'run1' })
    expect(runs.calls).toEqual([
      expect.objectContaining({
        mode: 'start',
        initiator: null,
        trigger: { type: 'webhook', event: null, collection: null, method: 'POST', body: { order: 42 } },
      }),
    ])
    await callWebhook(deps, call({ token: open.webhookToken, authorization: undefined, ip: '198.51.100.1' }))
    expect(runs.calls).toHaveLength(2)
  })

  it.each([
    ['an unknown token', { token: 'nope' }, 404, 'not_found'],
    ['an inactive flow', { token: inactive.webhookToken }, 404, 'not_found'],
    ['a flow of another trigger', { token: notWebhook.webhookToken }, 404, 'not_found'],
    ['an address outside the allowlist', { ip: '198.51.100.1' }, 403, 'forbidden'],
    ['a missing secret', { authorization: undefined }, 401, 'unauthorized'],
    ['a wrong secret', { authorization: 'Bearer nope' }, 401, 'unauthorized'],
    ['a method not allowed', { method: 'PUT' }, 405, 'method_not_allowed'],
    ['GET on a POST-only webhook', { token: open.webhookToken, method: 'GET' }, 405, 'method_not_allowed'],
  ] as const)('refuses %s and runs nothing', async (_name, over, status, code) => {
    const { deps, runs } = setup()
    let read = false
    const refused = await refusal(callWebhook(deps, call({ ...over, input: async () => ((read = true), {}) })))
    expect(refused).toMatchObject({ status, code })
    if (code === 'method_not_allowed') expect(refused?.headers?.Allow).toBeDefined()
    expect(runs.calls).toEqual([])
    expect(read).toBe(false)
  })
})
