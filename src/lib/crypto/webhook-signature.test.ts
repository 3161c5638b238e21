import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { verifyWebhookSignature, webhookSignature, webhookSignatureHeaders } from './webhook-signature.js'

describe('webhook signature', () => {
  it('is sha256=<hex HMAC-SHA256 of the body keyed with the secret>', () => {
    const body = JSON.stringify({ a: 1, b: 'ü' })
    const hex = createHmac('sha256', 'whsec').update(body, 'utf8').digest('hex')
    expect(webhookSignature('whsec', body)).toBe(`sha256=${hex}`)
  })
  it('gives the headers with the ISO time of dispatch', () => {
    expect(webhookSignatureHeaders('s', '{}', new Date(Date.UTC(2026, 0, 2, 3, 4, 5)))).toEqual({
      'X-Service-Signature': webhookSignature('s', '{}'),
      'X-Service-Timestamp': '2026-01-02T03:04:05.000Z',
    })
  })
  it('verifies only the same body under the same secret', () => {
    const sig = webhookSignature('s', '{"a":1}')
    expect(verifyWebhookSignature('s', '{"a":1}', sig)).toBe(true)
    expect(verifyWebhookSignature('s', '{"a":2}', sig)).toBe(false)
    expect(verifyWebhookSignature('t', '{"a":1}', sig)).toBe(false)
    expect(verifyWebhookSignature('s', '{"a":1}', undefined)).toBe(false)
  })
})
