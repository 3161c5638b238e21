import { describe, expect, it } from 'vitest'
import {
  containsMask,
  isCredentialHeader,
  MASK,
  maskCredentials,
  needsMasking,
  maskSteps,
  maskTriggerConfig,
  restoreMasked,
  restoreMaskedTrigger,
} from './masking.js'

describe('isCredentialHeader', () => {
  it.each([
    'Authorization',
    'authorization',
    'Proxy-Authorization',
    'Cookie',
    'Set-Cookie',
    'X-Api-Key',
    'x-api-key',
    'apikey',
    'ApiKey',
    'api-key',
    'API_KEY',
    'X-ApiKey',
    'X-Auth-Token',
    'X-Access-Token',
    'X-Amz-Security-Token',
    'X-CSRF-Token',
    'token',
    'X-Client-Secret',
    'secret',
    'X-Db-Password',
    'x_goog_api_key',
    'Idempotency-Key',
  ])('%s carries a credential', (name) => expect(isCredentialHeader(name)).toBe(true))
  it.each([
    'Content-Type',
    'Accept',
    'X-Trace',
    'X-Request-Id',
    'Keep-Alive',
    'X-Tokens-Used',
    'X-Key-Id',
    'User-Agent',
    'X-Secretary',
    '',
  ])('%s does not', (name) => expect(isCredentialHeader(name)).toBe(false))
})

describe('maskCredentials', () => {
  it.each([
    ['webhook_dispatch secret', 'webhook_dispatch', { url: 'u', secret: 's' }, { url: 'u', secret: MASK }],
    [
      'http_request bearer token',
      'http_request',
      { auth: { type: 'bearer', token: 't' } },
      { auth: { type: 'bearer', token: MASK } },
    ],
    [
      'http_request basic password (username kept)',
      'http_request',
      { auth: { type: 'basic', username: 'u', password: 'p' } },
      { auth: { type: 'basic', username: 'u', password: MASK } },
    ],
    [
      'http_request api_key token (header name kept)',
      'http_request',
      { auth: { type: 'api_key', header: 'X-Key', token: 't' } },
      { auth: { type: 'api_key', header: 'X-Key', token: MASK } },
    ],
    [
      'Authorization header in any step, any case',
      'log',
      { headers: { AUTHORIZATION: 'a', authorization: 'b', 'X-Other': 'c' } },
      { headers: { AUTHORIZATION: MASK, authorization: MASK, 'X-Other': 'c' } },
    ],
    [
      'every credential header, names kept',
      'graphql_request',
      {
        headers: {
          'X-Api-Key': 'k',
          Cookie: 'c',
          'Set-Cookie': 's',
          'X-Auth-Token': 't',
          'Proxy-Authorization': 'p',
          apikey: 'a',
          'Content-Type': 'application/json',
        },
      },
      {
        headers: {
          'X-Api-Key': MASK,
          Cookie: MASK,
          'Set-Cookie': MASK,
          'X-Auth-Token': MASK,
          'Proxy-Authorization': MASK,
          apikey: MASK,
          'Content-Type': 'application/json',
        },
      },
    ],
    ['a secret on another operation is not a credential', 'set_variable', { secret: 'visible' }, { secret: 'visible' }],
    ['empty and non-string values stay', 'webhook_dispatch', { secret: '' }, { secret: '' }],
    [
      'nested steps (a loop body)',
      'loop',
      { operations: [{ key: 'in', type: 'webhook_dispatch', config: { secret: 's' } }] },
      { operations: [{ key: 'in', type: 'webhook_dispatch', config: { secret: MASK } }] },
    ],
    [
      'nested steps of switch cases and default',
      'switch',
      {
        value: 1,
        cases: [{ match: 1, steps: [{ key: 'c', type: 'webhook_dispatch', config: { secret: 's' } }] }],
        default: [{ key: 'd', type: 'http_request', config: { auth: { token: 't' } } }],
      },
      {
        value: 1,
        cases: [{ match: 1, steps: [{ key: 'c', type: 'webhook_dispatch', config: { secret: MASK } }] }],
        default: [{ key: 'd', type: 'http_request', config: { auth: { token: MASK } } }],
      },
    ],
  ])('%s', (_name, type, config, masked) => {
    const before = structuredClone(config)
    expect(maskCredentials(config as Record<string, unknown>, type)).toEqual(masked)
    expect(config).toEqual(before) // a copy: the input is untouched
  })

  it('without a type masks every known credential path (a recorded step input)', () => {
    expect(
      maskCredentials({ secret: 's', auth: { token: 't', password: 'p' }, headers: { Authorization: 'x' } }),
    ).toEqual({
      secret: MASK,
      auth: { token: MASK, password: MASK },
      headers: { Authorization: MASK },
    })
  })
})

describe('maskSteps, maskTriggerConfig', () => {
  it('masks each step by its type and a webhook trigger secret only', () => {
    const steps = [{ key: 'a', type: 'webhook_dispatch', config: { secret: 's' }, onError: 'stop' }]
    expect(maskSteps(steps)).toEqual([
      { key: 'a', type: 'webhook_dispatch', config: { secret: MASK }, onError: 'stop' },
    ])
    expect(maskTriggerConfig('webhook', { secret: 's', require_auth: true })).toEqual({
      secret: MASK,
      require_auth: true,
    })
    expect(maskTriggerConfig('manual', { secret: 's' })).toEqual({ secret: 's' })
  })
})

describe('restoreMasked', () => {
  const stored = [
    {
      key: 'a',
      type: 'http_request',
      config: { auth: { type: 'bearer', token: 'real' }, headers: { Authorization: 'Bearer h' } },
    },
    { key: 'k', type: 'graphql_request', config: { headers: { 'X-Api-Key': 'key-real', Cookie: 'old' } } },
    {
      key: 'loop',
      type: 'loop',
      config: { operations: [{ key: 'inner', type: 'webhook_dispatch', config: { secret: 'inner-real' } }] },
    },
    {
      key: 'sw',
      type: 'switch',
      config: {
        value: 1,
        cases: [{ match: 1, steps: [{ key: 'in_case', type: 'webhook_dispatch', config: { secret: 'case-real' } }] }],
      },
    },
  ]
  it.each([
    [
      'a mask restores the stored value of the same key',
      [{ key: 'a', type: 'http_request', config: { auth: { type: 'bearer', token: MASK } } }],
      [{ key: 'a', type: 'http_request', config: { auth: { type: 'bearer', token: 'real' } } }],
    ],
    [
      'headers too',
      [{ key: 'a', type: 'http_request', config: { headers: { Authorization: MASK } } }],
      [{ key: 'a', type: 'http_request', config: { headers: { Authorization: 'Bearer h' } } }],
    ],
    [
      'an X-Api-Key header by its name',
      [{ key: 'k', type: 'graphql_request', config: { headers: { 'X-Api-Key': MASK, Cookie: 'new' } } }],
      [{ key: 'k', type: 'graphql_request', config: { headers: { 'X-Api-Key': 'key-real', Cookie: 'new' } } }],
    ],
    [
      'a new key drops the mask',
      [{ key: 'b', type: 'http_request', config: { auth: { token: MASK } } }],
      [{ key: 'b', type: 'http_request', config: { auth: {} } }],
    ],
    [
      'a real value rotates it',
      [{ key: 'a', type: 'http_request', config: { auth: { token: 'new' } } }],
      [{ key: 'a', type: 'http_request', config: { auth: { token: 'new' } } }],
    ],
    [
      'nested steps by their own key, wherever they moved',
      [{ key: 'inner', type: 'webhook_dispatch', config: { secret: MASK } }],
      [{ key: 'inner', type: 'webhook_dispatch', config: { secret: 'inner-real' } }],
    ],
    [
      'steps of a switch case',
      [
        {
          key: 'sw',
          type: 'switch',
          config: {
            value: 1,
            cases: [{ match: 1, steps: [{ key: 'in_case', type: 'webhook_dispatch', config: { secret: MASK } }] }],
          },
        },
      ],
      [
        {
          key: 'sw',
          type: 'switch',
          config: {
            value: 1,
            cases: [
              { match: 1, steps: [{ key: 'in_case', type: 'webhook_dispatch', config: { secret: 'case-real' } }] },
            ],
          },
        },
      ],
    ],
    [
      'a path the stored step lacks drops',
      [{ key: 'a', type: 'http_request', config: { auth: { password: MASK } } }],
      [{ key: 'a', type: 'http_request', config: { auth: {} } }],
    ],
  ])('%s', (_name, incoming, expected) => {
    expect(restoreMasked(incoming as unknown[], stored)).toEqual(expected)
  })

  it('nothing stored: every mask is dropped and none remains', () => {
    const out = restoreMasked([{ key: 'a', type: 'x', config: { a: MASK, b: { c: MASK }, d: [MASK, 'k'] } }], [])
    expect(containsMask(out)).toBe(false)
  })

  it('trigger config: restored from the stored one or dropped', () => {
    expect(restoreMaskedTrigger({ secret: MASK, require_auth: true }, { secret: 'real' })).toEqual({
      secret: 'real',
      require_auth: true,
    })
    expect(restoreMaskedTrigger({ secret: MASK }, null)).toEqual({})
    expect(restoreMaskedTrigger({ secret: MASK }, { secret: MASK })).toEqual({})
  })
})

describe('needsMasking (the step logs skip the copy when it is false)', () => {
  const cases: [string, Record<string, unknown>, string | undefined][] = [
    ['plain config', { key: 'x', value: '{{$trigger.body.n}}' }, 'set_variable'],
    ['a token', { url: 'https://a.example', auth: { type: 'bearer', token: 't0k' } }, 'http_request'],
    ['an empty token', { url: 'https://a.example', auth: { type: 'bearer', token: '' } }, 'http_request'],
    ['a credential header', { url: 'https://a.example', headers: { 'X-Api-Key': 'k' } }, 'http_request'],
    ['a plain header', { url: 'https://a.example', headers: { Accept: 'text/plain' } }, 'http_request'],
    ['a nested step', { operations: [{ key: 'in', type: 'webhook_dispatch', config: { secret: 's' } }] }, 'loop'],
    [
      'a nested step deep in a switch',
      { cases: [{ when: 1, steps: [{ key: 'in', type: 'log', config: {} }] }] },
      'switch',
    ],
    ['untyped, with a secret', { secret: 's' }, undefined],
    ['untyped, without', { other: [1, { a: 'b' }] }, undefined],
  ]
  it.each(cases)('%s: true exactly when masking changes the config', (_name, config, type) => {
    const changed =
      JSON.stringify(maskCredentials(config, type)) !== JSON.stringify(config) ||
      JSON.stringify(config).includes('"steps"') ||
      JSON.stringify(config).includes('"operations"')
    expect(needsMasking(config, type)).toBe(changed)
  })

  it('walks a resolved input 100,000 levels deep without recursion', () => {
    let deep: unknown = 'leaf'
    for (let i = 0; i < 100_000; i++) deep = { next: deep }
    expect(needsMasking({ body: deep }, 'set_variable')).toBe(false)
  })
})
