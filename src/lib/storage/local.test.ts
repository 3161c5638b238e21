import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { boot, startServer, type TestServer } from '../../../test/support/harness.js'
import { readAll, runStorageContract, sha256, shiftableClock } from './contract.js'
import { createLocalStorage, type LocalStorage } from './local.js'

// The driver under test signs with a clock of its own; the URLs are served by a real Plinth server that
// shares its SECRET_KEY and DATA_DIR, so every presigned test also shows a URL signed by one instance
// working on another.
runStorageContract('local', async () => {
  const server = await startServer()
  const { clock, shift } = shiftableClock()
  const storage = createLocalStorage({
    dataDir: server.dataDir,
    publicUrl: server.url,
    secretKey: server.app.config.secretKey,
    clock,
  })
  return { storage, shiftClock: shift, close: () => server.stop() }
})

describe('local storage served by Plinth', () => {
  let server: TestServer
  let storage: LocalStorage
  let n = 0
  const freshKey = (name = 'object.bin') => `projects/local/${++n}-${randomBytes(4).toString('hex')}/${name}`
  const leftovers = () =>
    existsSync(join(server.dataDir, 'files-tmp')) ? readdirSync(join(server.dataDir, 'files-tmp')) : []

  beforeAll(async () => {
    server = await startServer()
    expect(server.app.storage.kind).toBe('local')
    storage = server.app.storage as LocalStorage
  })
  afterAll(async () => {
    await server.stop()
  })

  it('keeps objects under DATA_DIR/files/<key>', async () => {
    const key = freshKey('note.txt')
    await storage.put(key, Buffer.from('on disk'), { contentType: 'text/plain' })
    expect(readFileSync(join(server.dataDir, 'files', key), 'utf8')).toBe('on disk')
    await storage.delete(key)
    expect(existsSync(join(server.dataDir, 'files', key))).toBe(false)
    // Emptied folders go too: the disk looks like the bucket.
    expect(existsSync(join(server.dataDir, 'files', key, '..'))).toBe(false)
  })

  it('lists keys in byte order, as S3 does', async () => {
    const base = `projects/order-${randomBytes(4).toString('hex')}`
    const keys = [
      `${base}/a/1.txt`,
      `${base}/a-b.txt`,
      `${base}/B.txt`,
      `${base}/a/2.txt`,
      `${base}/é.txt`,
      `${base}/c.txt`,
    ]
    for (const key of keys) await storage.put(key, Buffer.from('x'), { contentType: 'text/plain' })
    expect(await storage.list(`${base}/`, 100)).toEqual(
      [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
    )
    expect(await storage.list(`${base}/`, 100)).toEqual([
      `${base}/B.txt`,
      `${base}/a-b.txt`,
      `${base}/a/1.txt`,
      `${base}/a/2.txt`,
      `${base}/c.txt`,
      `${base}/é.txt`,
    ])
  })

  it('reports local storage on /health', async () => {
    const health = await server.request('GET', '/health')
    expect(health.status).toBe(200)
    expect(health.body.storage).toBe('local')
  })

  it('takes uploads larger than MAX_BODY_BYTES: the signed size bounds them instead', async () => {
    const bytes = randomBytes(server.app.config.maxBodyBytes + 1024)
    const key = freshKey()
    const url = await storage.presignPut(key, {
      contentType: 'application/zip',
      sizeBytes: bytes.length,
      expiresIn: 120,
    })
    const put = await fetch(url, { method: 'PUT', body: bytes, headers: { 'content-type': 'application/zip' } })
    expect(put.status).toBe(200)
    expect(sha256(await readAll(await storage.get(key)))).toBe(sha256(bytes))
  })

  describe('refusals in the error envelope, with nothing left behind', () => {
    it('403 forbidden for every tampered claim', async () => {
      const key = freshKey()
      await storage.put(key, Buffer.from('0123456789'), { contentType: 'text/plain' })
      const putKey = freshKey()
      const putUrl = new URL(
        await storage.presignPut(putKey, { contentType: 'text/plain', sizeBytes: 10, expiresIn: 120 }),
      )
      const getUrl = new URL(await storage.presignGet(key, { expiresIn: 120, filename: 'a.txt' }))
      const variants: [string, URL, string, string | null][] = [
        ['PUT', putUrl, 'key', key],
        ['PUT', putUrl, 'size', '1000'],
        ['PUT', putUrl, 'type', 'text/html'],
        ['PUT', putUrl, 'expires', String(Number(putUrl.searchParams.get('expires')) + 3600)],
        ['PUT', putUrl, 'sig', null],
        ['GET', getUrl, 'key', freshKey()],
        ['GET', getUrl, 'name', 'b.html'],
        ['GET', getUrl, 'type', 'text/html'],
        ['GET', getUrl, 'expires', String(Number(getUrl.searchParams.get('expires')) + 3600)],
        ['GET', getUrl, 'sig', 'x'],
      ]
      for (const [method, url, param, value] of variants) {
        const tampered = new URL(url)
        if (value === null) tampered.searchParams.delete(param)
        else tampered.searchParams.set(param, value)
        const size = Number(tampered.searchParams.get('size') ?? 10)
        const reply = await fetch(
          tampered,
          method === 'PUT'
            ? { method, body: 'x'.repeat(Math.min(size, 10)), headers: { 'content-type': 'text/plain' } }
            : {},
        )
        expect(reply.status, `${method} ${param}`).toBe(403)
        expect(await reply.json()).toMatchObject({ error: 'forbidden', message: expect.any(String), details: {} })
      }
      // The same URL, untouched, still works: the refusals were the tampering.
      expect((await fetch(getUrl)).status).toBe(200)
      expect(await storage.head(putKey)).toBeNull()
      expect(leftovers()).toEqual([])
    })

    it('403 forbidden once expired, with the expiry in details', async () => {
      const { clock, shift } = shiftableClock()
      const signer = createLocalStorage({
        dataDir: server.dataDir,
        publicUrl: server.url,
        secretKey: server.app.config.secretKey,
        clock,
      })
      shift(-3600_000)
      const url = await signer.presignPut(freshKey(), { contentType: 'text/plain', sizeBytes: 2, expiresIn: 120 })
      const reply = await fetch(url, { method: 'PUT', body: 'hi', headers: { 'content-type': 'text/plain' } })
      expect(reply.status).toBe(403)
      expect(await reply.json()).toMatchObject({ error: 'forbidden', details: { expiredAt: expect.any(Number) } })
    })

    it('403 for a URL signed with another SECRET_KEY', async () => {
      const other = createLocalStorage({
        dataDir: server.dataDir,
        publicUrl: server.url,
        secretKey: randomBytes(32).toString('hex'),
      })
      const reply = await fetch(
        await other.presignPut(freshKey(), { contentType: 'text/plain', sizeBytes: 2, expiresIn: 120 }),
        {
          method: 'PUT',
          body: 'hi',
          headers: { 'content-type': 'text/plain' },
        },
      )
      expect(reply.status).toBe(403)
    })

    it('413 payload_too_large when Content-Length is over the signed size', async () => {
      const key = freshKey()
      const url = await storage.presignPut(key, { contentType: 'text/plain', sizeBytes: 10, expiresIn: 120 })
      const reply = await fetch(url, { method: 'PUT', body: 'x'.repeat(11), headers: { 'content-type': 'text/plain' } })
      expect(reply.status).toBe(413)
      expect(await reply.json()).toMatchObject({ error: 'payload_too_large', details: { limit: 10 } })
      expect(await storage.head(key)).toBeNull()
      expect(leftovers()).toEqual([])
    })

    it('413 payload_too_large when a streamed body runs past the signed size', async () => {
      const key = freshKey()
      const url = await storage.presignPut(key, {
        contentType: 'application/octet-stream',
        sizeBytes: 100_000,
        expiresIn: 120,
      })
      // No Content-Length: the body arrives chunked and is cut off while streaming.
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 20; i++) controller.enqueue(new Uint8Array(10_000))
          controller.close()
        },
      })
      const reply = await fetch(url, {
        method: 'PUT',
        body,
        headers: { 'content-type': 'application/octet-stream' },
        duplex: 'half',
      } as RequestInit)
      expect(reply.status).toBe(413)
      expect(await reply.json()).toMatchObject({ error: 'payload_too_large' })
      expect(await storage.head(key)).toBeNull()
      expect(leftovers()).toEqual([])
    })

    it('400 invalid_request when a streamed body ends short of the signed size', async () => {
      const key = freshKey()
      const url = await storage.presignPut(key, {
        contentType: 'application/octet-stream',
        sizeBytes: 100_000,
        expiresIn: 120,
      })
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new Uint8Array(50_000))
          controller.close()
        },
      })
      const reply = await fetch(url, {
        method: 'PUT',
        body,
        headers: { 'content-type': 'application/octet-stream' },
        duplex: 'half',
      } as RequestInit)
      expect(reply.status).toBe(400)
      expect(await reply.json()).toMatchObject({
        error: 'invalid_request',
        details: { expected: 100_000, received: 50_000 },
      })
      expect(await storage.head(key)).toBeNull()
      expect(leftovers()).toEqual([])
    })

    it('keeps nothing of an upload the client abandons halfway, and logs no server fault', async () => {
      const key = freshKey()
      const url = new URL(
        await storage.presignPut(key, {
          contentType: 'application/octet-stream',
          sizeBytes: 1_000_000,
          expiresIn: 120,
        }),
      )
      const req = request(url, {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream', 'content-length': '1000000' },
      })
      req.on('error', () => {})
      req.write(Buffer.alloc(300_000))
      // Hang up once the server has started writing the body to a temp file.
      await vi.waitFor(() => expect(leftovers().length).toBeGreaterThan(0))
      req.destroy()
      await vi.waitFor(() => expect(leftovers()).toEqual([]))
      expect(await storage.head(key)).toBeNull()
      await vi.waitFor(() =>
        expect(
          server.logs.some((line) => line.includes('"path":"/api/v1/storage/object"') && line.includes('"status":0')),
        ).toBe(true),
      )
      expect(server.logs.filter((line) => line.includes('request failed'))).toEqual([])
    })

    it('400 invalid_request for another Content-Type, naming the signed one', async () => {
      const key = freshKey()
      const url = await storage.presignPut(key, { contentType: 'image/png', sizeBytes: 4, expiresIn: 120 })
      const reply = await fetch(url, { method: 'PUT', body: '<b/>', headers: { 'content-type': 'text/html' } })
      expect(reply.status).toBe(400)
      expect(await reply.json()).toMatchObject({ error: 'invalid_request', details: { expected: 'image/png' } })
      // Case and spacing of the same type do not matter.
      const same = await fetch(
        await storage.presignPut(key, { contentType: 'text/plain; charset=utf-8', sizeBytes: 4, expiresIn: 120 }),
        {
          method: 'PUT',
          body: 'abcd',
          headers: { 'content-type': 'Text/Plain;Charset=UTF-8' },
        },
      )
      expect(same.status).toBe(200)
    })

    it('404 not_found for a signed download of a missing object', async () => {
      const reply = await fetch(await storage.presignGet(freshKey(), { expiresIn: 60 }))
      expect(reply.status).toBe(404)
      expect(await reply.json()).toMatchObject({ error: 'not_found' })
    })

    it('409 conflict for a second PUT through one upload URL: the first bytes stay (single use)', async () => {
      const key = freshKey()
      const url = await storage.presignPut(key, { contentType: 'text/plain', sizeBytes: 5, expiresIn: 120 })
      const put = (body: string) => fetch(url, { method: 'PUT', body, headers: { 'content-type': 'text/plain' } })
      // A refused upload stores nothing, so it does not use the URL up.
      expect((await put('hey')).status).toBe(400)
      expect((await put('hello')).status).toBe(200)
      const again = await put('EVIL!')
      expect(again.status).toBe(409)
      expect(await again.json()).toMatchObject({ error: 'conflict', message: expect.stringContaining('already used') })
      expect((await readAll(await storage.get(key))).toString()).toBe('hello')
      expect(leftovers()).toEqual([])
    })

    it('of two uploads racing through one URL, exactly one is kept and the other is 409', async () => {
      const key = freshKey()
      const first = randomBytes(2_000_000)
      const second = randomBytes(2_000_000)
      const url = await storage.presignPut(key, {
        contentType: 'application/octet-stream',
        sizeBytes: first.length,
        expiresIn: 120,
      })
      const put = (body: Buffer) =>
        fetch(url, { method: 'PUT', body, headers: { 'content-type': 'application/octet-stream' } }).then(
          async (r) => ({ status: r.status, text: await r.text() }),
        )
      const replies = await Promise.all([put(first), put(second)])
      expect(replies.map((r) => r.status).sort()).toEqual([200, 409])
      const kept = sha256(await readAll(await storage.get(key)))
      expect(kept).toBe(sha256(replies[0]!.status === 200 ? first : second))
      expect(leftovers()).toEqual([])
    })

    it('409 conflict when a key would also be a folder of keys', async () => {
      const key = freshKey()
      await storage.put(`${key}/child`, Buffer.from('x'), { contentType: 'text/plain' })
      const url = await storage.presignPut(key, { contentType: 'text/plain', sizeBytes: 1, expiresIn: 60 })
      const reply = await fetch(url, { method: 'PUT', body: 'x', headers: { 'content-type': 'text/plain' } })
      expect(reply.status).toBe(409)
      expect(await reply.json()).toMatchObject({ error: 'conflict' })
      expect(leftovers()).toEqual([])
    })
  })

  describe('downloads', () => {
    // S3 signs the method too: its GET URLs refuse HEAD. Plinth's accept it.
    it('answers HEAD on a download URL with the headers and no body', async () => {
      const key = freshKey()
      await storage.put(key, Buffer.from('twelve bytes'), { contentType: 'text/plain' })
      const head = await fetch(await storage.presignGet(key, { expiresIn: 60, filename: 'a.txt' }), { method: 'HEAD' })
      expect(head.status).toBe(200)
      expect(head.headers.get('content-length')).toBe('12')
      expect(head.headers.get('content-type')).toBe('text/plain')
      expect(head.headers.get('content-disposition')).toBe('attachment; filename="a.txt"')
      expect(await head.text()).toBe('')
    })

    it('sandboxes active content served from the API origin', async () => {
      const key = freshKey('page.html')
      await storage.put(key, Buffer.from('<script>alert(1)</script>'), { contentType: 'text/html' })
      const html = await fetch(await storage.presignGet(key, { expiresIn: 60 }))
      expect(html.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox")
      expect(html.headers.get('x-content-type-options')).toBe('nosniff')
      const image = freshKey('a.png')
      await storage.put(image, Buffer.from('png'), { contentType: 'image/png' })
      const png = await fetch(await storage.presignGet(image, { expiresIn: 60 }))
      expect(png.headers.get('content-security-policy')).toBeNull()
      expect(png.headers.get('x-content-type-options')).toBe('nosniff')
    })

    it('answers an open-ended and a suffix range, and ignores an unsatisfiable one', async () => {
      const key = freshKey()
      await storage.put(key, Buffer.from('0123456789'), { contentType: 'text/plain' })
      const url = await storage.presignGet(key, { expiresIn: 60 })
      const tail = await fetch(url, { headers: { range: 'bytes=7-' } })
      expect([tail.status, tail.headers.get('content-range'), await tail.text()]).toEqual([206, 'bytes 7-9/10', '789'])
      const suffix = await fetch(url, { headers: { range: 'bytes=-2' } })
      expect([suffix.status, suffix.headers.get('content-range'), await suffix.text()]).toEqual([
        206,
        'bytes 8-9/10',
        '89',
      ])
      const beyond = await fetch(url, { headers: { range: 'bytes=50-60' } })
      expect([beyond.status, await beyond.text()]).toEqual([200, '0123456789'])
    })

    it('needs no session: the signature is the credential, and a session does not replace it', async () => {
      const key = freshKey()
      await storage.put(key, Buffer.from('x'), { contentType: 'text/plain' })
      const unsigned = await server.request('GET', `/api/v1/storage/object?key=${encodeURIComponent(key)}`)
      expect(unsigned.status).toBe(403)
      expect(unsigned.body).toMatchObject({ error: 'forbidden' })
    })
  })

  it('serves a URL signed by one instance from another sharing SECRET_KEY and DATA_DIR', async () => {
    const { database, secretKey } = server.app.config
    const sibling = await boot({
      DATA_DIR: server.dataDir,
      SECRET_KEY: secretKey,
      ...(database.kind === 'postgres' ? { DATABASE_URL: database.url } : {}),
    })
    try {
      const key = freshKey('shared.bin')
      const bytes = randomBytes(50_000)
      // Signed by the first instance, uploaded to the second (a load balancer's choice), read from the first.
      const upload = new URL(
        await storage.presignPut(key, {
          contentType: 'application/octet-stream',
          sizeBytes: bytes.length,
          expiresIn: 120,
        }),
      )
      const put = await fetch(`${sibling.url}${upload.pathname}${upload.search}`, {
        method: 'PUT',
        body: bytes,
        headers: { 'content-type': 'application/octet-stream' },
      })
      expect(put.status).toBe(200)
      const download = new URL(await sibling.app.storage.presignGet(key, { expiresIn: 60 }))
      const got = await fetch(`${server.url}${download.pathname}${download.search}`)
      expect(got.status).toBe(200)
      expect(sha256(Buffer.from(await got.arrayBuffer()))).toBe(sha256(bytes))
    } finally {
      await sibling.stop()
    }
  })
})
