import { describe, expect, it } from 'vitest'
import { readSignedUrl, signObjectUrl, type SignedGrant } from './signed-url.js'

const secret = 'a-test-secret-key-that-is-long-enough-0123456789'
const now = 1_800_000_000

function queryOf(url: string): Record<string, string> {
  return Object.fromEntries(new URL(url).searchParams)
}

describe('signed object URLs', () => {
  const put: SignedGrant = {
    method: 'PUT',
    key: 'projects/p/f',
    expires: now + 120,
    sizeBytes: 10,
    contentType: 'image/png',
  }
  const get: SignedGrant = {
    method: 'GET',
    key: 'projects/p/f',
    expires: now + 300,
    filename: 'a b.png',
    contentType: null,
  }

  it('points at PUBLIC_URL and round-trips every claim', () => {
    const url = signObjectUrl(secret, 'https://plinth.example.com/', put)
    expect(url.startsWith('https://plinth.example.com/api/v1/storage/object?key=projects%2Fp%2Ff&expires=')).toBe(true)
    expect(readSignedUrl(secret, 'PUT', queryOf(url), now)).toEqual(put)
    expect(readSignedUrl(secret, 'GET', queryOf(signObjectUrl(secret, 'http://x', get)), now)).toEqual(get)
  })

  it('is valid up to and including its expiry second, and refused after', () => {
    const query = queryOf(signObjectUrl(secret, 'http://x', put))
    expect(readSignedUrl(secret, 'PUT', query, now + 120).key).toBe('projects/p/f')
    expect(() => readSignedUrl(secret, 'PUT', query, now + 121)).toThrow(
      expect.objectContaining({ code: 'forbidden', message: expect.stringMatching(/expired/) }),
    )
  })

  it.each([
    ['key', 'projects/p/other'],
    ['expires', String(now + 9999)],
    ['size', '11'],
    ['type', 'text/html'],
    ['sig', 'AAAA'],
  ])('refuses an upload URL with %s changed', (param, value) => {
    const query = { ...queryOf(signObjectUrl(secret, 'http://x', put)), [param]: value }
    expect(() => readSignedUrl(secret, 'PUT', query, now)).toThrow(expect.objectContaining({ code: 'forbidden' }))
  })

  it.each(['key', 'expires', 'size', 'type', 'sig'])('refuses an upload URL without %s', (param) => {
    const query: Record<string, string | undefined> = queryOf(signObjectUrl(secret, 'http://x', put))
    delete query[param]
    expect(() => readSignedUrl(secret, 'PUT', query, now)).toThrow(expect.objectContaining({ code: 'forbidden' }))
  })

  it.each([
    ['name', 'evil.html'],
    ['type', 'text/html'],
  ])('refuses a download URL with %s added or changed', (param, value) => {
    const query = { ...queryOf(signObjectUrl(secret, 'http://x', get)), [param]: value }
    expect(() => readSignedUrl(secret, 'GET', query, now)).toThrow(expect.objectContaining({ code: 'forbidden' }))
  })

  it('refuses a download URL used to upload, and the reverse', () => {
    expect(() => readSignedUrl(secret, 'PUT', queryOf(signObjectUrl(secret, 'http://x', get)), now)).toThrow(
      expect.objectContaining({ code: 'forbidden' }),
    )
    expect(() => readSignedUrl(secret, 'GET', queryOf(signObjectUrl(secret, 'http://x', put)), now)).toThrow(
      expect.objectContaining({ code: 'forbidden' }),
    )
  })

  it('refuses a URL signed with another secret', () => {
    const query = queryOf(signObjectUrl('another-secret-key-that-is-long-enough-9876543210', 'http://x', put))
    expect(() => readSignedUrl(secret, 'PUT', query, now)).toThrow(expect.objectContaining({ code: 'forbidden' }))
  })
})
