import { describe, expect, it } from 'vitest'
import { containsMask, MASK, maskCredentials, maskSteps, maskTriggerConfig, restoreMasked, restoreMaskedTrigger } from './masking.js'

describe('maskCredentials', () => {
  it.each([
    ['webhook_dispatch secret', 'webhook_dispatch', { url: 'u', secret: 's' }, { url: 'u', secret: MASK }],
    ['http_request bearer token', 'http_request', { auth: { type: 'bearer', token: 't' } }, { auth: { type: 'bearer', token: MASK } }],
    ['http_request basic password (username kept)', 'http_request', { auth: { type: 'basic', username: 'u', password: 'p' } }, { auth: { type: 'basic', username: 'u', password: MASK } }],
    ['http_request api_key token (header name kept)', 'http_request', { auth: { type: 'api_key', header: 'X-Key', token: 't' } }, { auth: { type: 'api_key', header: 'X-Key', token: MASK } }],
    ['Authorization header in any step, any case', 'log', { headers: { AUTHORIZATION: 'a', authorization: 'b', 'X-Other': 'c' } }, { headers: { AUTHORIZATION: MASK, authorization: MASK, 'X-Other': 'c' } }],
    ['a secret on another operation is not a credential', 'set_variable', { secret: 'visible' }, { secret: 'visible' }],
    ['empty and non-string values stay', 'webhook_dispatch', { secret: '' }, { secret: '' }],
    ['nested steps (a loop body)', 'loop', { operations: [{ key: 'in', type: 'webhook_dispatch', config: { secret: 's' } }] }, { operations: [{ key: 'in', type: 'webhook_dispatch', config: { secret: MASK } }] }],
    ['nested steps of switch cases and default', 'switch', { value: 1, cases: [{ match: 1, steps: [{ key: 'c', type: 'webhook_dispatch', config: { secret: 's' } }] }], default: [{ key: 'd', type: 'http_request', config: { auth: { token: 't' } } }] }, { value: 1, cases: [{ match: 1, steps: [{ key: 'c', type: 'webhook_dispatch', config: { secret: MASK } }] }], default: [{ key: 'd', type: 'http_request', config: { auth: { token: MASK } } }] }],
  ])('%s', (_name, type, config, masked) => {
    const before = structuredClone(config)
    expect(maskCredentials(config as Record<string, unknown>, type)).toEqual(masked)
    expect(config).toEqual(before) // a copy: the input is untouched
  })

  it('without a type masks every known credential path (a recorded step input)', () => {
    expect(maskCredentials({ secret: 's', auth: { token: 't', password: 'p' }, headers: { Authorization: 'x' } })).toEqual({
      secret: MASK,
      auth: { token: MASK, password: MASK },
      headers: { Authorization: MASK },
    })
  })
})

describe('maskSteps, maskTriggerConfig', () => {
  it('masks each step by its type and a webhook trigger secret only', () => {
    const steps = [{ key: 'a', type: 'webhook_dispatch', config: { secret: 's' }, onError: 'stop' }]
    expect(maskSteps(steps)).toEqual([{ key: 'a', type: 'webhook_dispatch', config: { secret: MASK }, onError: 'stop' }])
    expect(maskTriggerConfig('webhook', { secret: 's', require_auth: true })).toEqual({ secret: MASK, require_auth: true })
    expect(maskTriggerConfig('manual', { secret: 's' })).toEqual({ secret: 's' })
  })
})

describe('restoreMasked', () => {
  const stored = [
    { key: 'a', type: 'http_request', config: { auth: { type: 'bearer', token: 'real' }, headers: { Authorization: 'Bearer h' } } },
    { key: 'loop', type: 'loop', config: { operations: [{ key: 'inner', type: 'webhook_dispatch', config: { secret: 'inner-real' } }] } },
    { key: 'sw', type: 'switch', config: { value: 1, cases: [{ match: 1, steps: [{ key: 'in_case', type: 'webhook_dispatch', config: { secret: 'case-real' } }] }] } },
  ]
  it.each([
    ['a mask restores the stored value of the same key', [{ key: 'a', type: 'http_request', config: { auth: { type: 'bearer', token: MASK } } }], [{ key: 'a', type: 'http_request', config: { auth: { type: 'bearer', token: 'real' } } }]],
    ['headers too', [{ key: 'a', type: 'http_request', config: { headers: { Authorization: MASK } } }], [{ key: 'a', type: 'http_request', config: { headers: { Authorization: 'Bearer h' } } }]],
    ['a new key drops the mask', [{ key: 'b', type: 'http_request', config: { auth: { token: MASK } } }], [{ key: 'b', type: 'http_request', config: { auth: {} } }]],
    ['a real value rotates it', [{ key: 'a', type: 'http_request', config: { auth: { token: 'new' } } }], [{ key: 'a', type: 'http_request', config: { auth: { token: 'new' } } }]],
    ['nested steps by their own key, wherever they moved', [{ key: 'inner', type: 'webhook_dispatch', config: { secret: MASK } }], [{ key: 'inner', type: 'webhook_dispatch', config: { secret: 'inner-real' } }]],
    ['steps of a switch case', [{ key: 'sw', type: 'switch', config: { value: 1, cases: [{ match: 1, steps: [{ key: 'in_case', type: 'webhook_dispatch', config: { secret: MASK } }] }] } }], [{ key: 'sw', type: 'switch', config: { value: 1, cases: [{ match: 1, steps: [{ key: 'in_case', type: 'webhook_dispatch', config: { secret: 'case-real' } }] }] } }]],
    ['a path the stored step lacks drops', [{ key: 'a', type: 'http_request', config: { auth: { password: MASK } } }], [{ key: 'a', type: 'http_request', config: { auth: {} } }]],
  ])('%s', (_name, incoming, expected) => {
    expect(restoreMasked(incoming as unknown[], stored)).toEqual(expected)
  })

  it('nothing stored: every mask is dropped and none remains', () => {
    const out = restoreMasked([{ key: 'a', type: 'x', config: { a: MASK, b: { c: MASK }, d: [MASK, 'k'] } }], [])
    expect(containsMask(out)).toBe(false)
  })

  it('trigger config: restored from the stored one or dropped', () => {
    expect(restoreMaskedTrigger({ secret: MASK, require_auth: true }, { secret: 'real' })).toEqual({ secret: 'real', require_auth: true })
    expect(restoreMaskedTrigger({ secret: MASK }, null)).toEqual({})
    expect(restoreMaskedTrigger({ secret: MASK }, { secret: MASK })).toEqual({})
  })
})
