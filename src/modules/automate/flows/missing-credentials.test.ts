import { describe, expect, it } from 'vitest'
import { createOperationRegistry } from '../../operations/index.js'
import { isCredentialPath, missingCredentials } from './missing-credentials.js'

const registry = createOperationRegistry()
const draft = (operations: unknown[], triggerType = 'manual', triggerConfig: Record<string, unknown> = {}) => ({
  triggerType,
  triggerConfig,
  operations,
})
const bearer = (key: string, auth: Record<string, unknown>) => ({
  key,
  type: 'http_request',
  config: { url: 'https://example.com', auth },
})

describe('missingCredentials', () => {
  it.each([
    ['a bearer token given', [bearer('a', { type: 'bearer', token: 't' })], []],
    ['a bearer token dropped', [bearer('a', { type: 'bearer' })], [{ step: 'a', path: 'config.auth.token' }]],
    [
      'a basic password dropped (username kept)',
      [bearer('b', { type: 'basic', username: 'u' })],
      [{ step: 'b', path: 'config.auth.password' }],
    ],
    [
      'an api_key token dropped',
      [bearer('c', { type: 'api_key', header: 'X-Key' })],
      [{ step: 'c', path: 'config.auth.token' }],
    ],
    ['no auth at all needs none', [{ key: 'd', type: 'http_request', config: { url: 'https://example.com' } }], []],
    [
      'an optional credential (webhook_dispatch secret) is never missing',
      [{ key: 'e', type: 'webhook_dispatch', config: { url: 'https://example.com' } }],
      [],
    ],
    ['other problems are not credentials', [{ key: 'f', type: 'http_request', config: {} }], []],
    [
      'nested in a loop',
      [
        {
          key: 'l',
          type: 'loop',
          config: { items: '{{$trigger.body}}', operations: [bearer('inner', { type: 'bearer' })] },
        },
      ],
      [{ step: 'inner', path: 'config.auth.token' }],
    ],
  ])('%s', (_name, operations, expected) => {
    expect(missingCredentials(registry, draft(operations))).toEqual(expected)
  })

  it('a webhook trigger that requires auth needs its secret', () => {
    expect(missingCredentials(registry, draft([], 'webhook', { require_auth: true }))).toEqual([
      { step: null, path: 'triggerConfig.secret' },
    ])
    expect(missingCredentials(registry, draft([], 'webhook', { require_auth: true, secret: 's' }))).toEqual([])
    expect(missingCredentials(registry, draft([], 'webhook', { require_auth: false }))).toEqual([])
  })
})

describe('a draft may lack a credential, nothing else', () => {
  const check = (steps: unknown[]) => () => registry.checkSteps(steps as never, { missingAllowed: isCredentialPath })
  it('saves with the credential missing', () => expect(check([bearer('a', { type: 'bearer' })])).not.toThrow())
  it('still refuses a missing url, an empty token and a bad auth type', () => {
    expect(check([{ key: 'a', type: 'http_request', config: { auth: { type: 'bearer' } } }])).toThrow(/url/)
    expect(check([bearer('a', { type: 'bearer', token: '' })])).toThrow(/auth\.token/)
    expect(check([bearer('a', { type: 'nope' })])).toThrow(/auth\.type/)
  })
  it('without the option the credential is required', () => {
    expect(() => registry.checkSteps([bearer('a', { type: 'bearer' })] as never)).toThrow(/auth\.token/)
  })
})
