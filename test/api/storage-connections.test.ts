import { createHash, createHmac, randomBytes } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isBlockedAddress } from '../../src/lib/outbound/index.js'
import { freePort, startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'
import { accountWithGrants, uniqueName } from './collections-support.js'

/**
 * /api/v1/storage-connections (core-api "Storage connection endpoints") over real HTTP: the connection
 * shape, defaults and refusals, the secret key (never in a response, a log line or the audit log; sealed
 * in the row; kept when a PUT omits it), the connection test against a real S3 peer (s3rver, fronted by
 * a SigV4 check so a wrong secret really fails), the deprecated /api/storage-connections alias,
 * permissions, projects, and the outbound-address policy (ALLOW_PRIVATE_NETWORK).
 */

const SECRET = `sc-secret-${randomBytes(12).toString('hex')}`
const WRONG_SECRET = `sc-wrong-${randomBytes(12).toString('hex')}`
// s3rver knows one access key id; the secret that goes with it is checked by the SigV4 layer below.
const ACCESS_KEY_ID = 'S3RVER'
const BUCKET = 'plinth-bucket'
const BASE = '/api/v1/storage-connections'

/** What this machine's own name resolves to (loopback on most hosts), for the connect-time guard test. */
const own = await lookup(hostname()).catch(() => null)

let s3: { url: string; stop: () => Promise<void> }
let server: TestServer
let owner: Account
/** Every reply of this file, to search for the secrets at the end. */
const replies: Reply[] = []

const call = async (
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> => {
  const reply = await server.request(method, path, { token, body, headers })
  replies.push(reply)
  return reply
}
const validBody = (extra: Record<string, unknown> = {}) => ({
  label: 'Archive',
  endpoint: s3.url,
  bucketName: BUCKET,
  accessKeyId: ACCESS_KEY_ID,
  secretKey: SECRET,
  ...extra,
})
async function create(extra: Record<string, unknown> = {}, token = owner.token): Promise<Record<string, any>> {
  const reply = await call('POST', BASE, token, validBody(extra))
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data
}
const testConnection = (id: string, token = owner.token) => call('POST', `${BASE}/${id}/test`, token)
async function listed(token = owner.token, headers?: Record<string, string>): Promise<Record<string, any>[]> {
  const reply = await call('GET', BASE, token, undefined, headers)
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}
async function storedRow(id: string): Promise<Record<string, unknown> | undefined> {
  return server.app.registry.system.db
    .selectFrom('storage_connections')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst()
}

beforeAll(async () => {
  s3 = await startS3(new Map([[ACCESS_KEY_ID, SECRET]]))
  server = await startServer({ ALLOW_PRIVATE_NETWORK: 'true' })
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
  await s3?.stop()
})

describe('POST /api/v1/storage-connections', () => {
  it('saves a connection: 201 { data } with every field but the secret; defaults s3 and auto', async () => {
    const before = Math.floor(Date.now() / 1000)
    const reply = await call('POST', BASE, owner.token, validBody())
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body).toEqual({
      data: {
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
        label: 'Archive',
        provider: 's3',
        endpoint: s3.url,
        region: 'auto',
        bucketName: BUCKET,
        accessKeyId: ACCESS_KEY_ID,
        createdAt: expect.any(Number),
        updatedAt: expect.any(Number),
      },
    })
    const data = reply.body.data
    expect(data.createdAt).toBeGreaterThanOrEqual(before)
    expect(data.updatedAt).toBe(data.createdAt)
    expect(reply.text).not.toContain(SECRET)
    expect(await listed()).toContainEqual(data)
  })

  it('keeps the provider and region sent; trims the label and a trailing slash of the endpoint', async () => {
    const data = await create({ label: '  Images  ', provider: 'r2', region: 'eu-west-1', endpoint: `${s3.url}/` })
    expect(data).toMatchObject({ label: 'Images', provider: 'r2', region: 'eu-west-1', endpoint: s3.url })
    const minio = await create({ provider: 'minio', region: 'us-east-1' })
    expect(minio).toMatchObject({ provider: 'minio', region: 'us-east-1' })
  })

  describe('refusals save nothing', () => {
    const refused: { name: string; body: () => Record<string, unknown> }[] = [
      { name: 'no label', body: () => ({ ...validBody(), label: undefined }) },
      { name: 'blank label', body: () => validBody({ label: '   ' }) },
      { name: 'label of 101 characters', body: () => validBody({ label: 'x'.repeat(101) }) },
      { name: 'no endpoint', body: () => ({ ...validBody(), endpoint: undefined }) },
      { name: 'endpoint not a URL', body: () => validBody({ endpoint: 'storage.example.com' }) },
      { name: 'ftp endpoint', body: () => validBody({ endpoint: 'ftp://storage.example.com' }) },
      {
        name: 'endpoint with credentials',
        body: () => validBody({ endpoint: 'https://user:pass@storage.example.com' }),
      },
      { name: 'endpoint with a query', body: () => validBody({ endpoint: 'https://storage.example.com/?x=1' }) },
      { name: 'endpoint with a fragment', body: () => validBody({ endpoint: 'https://storage.example.com/#x' }) },
      { name: 'no bucketName', body: () => ({ ...validBody(), bucketName: undefined }) },
      { name: 'bucketName of 2 characters', body: () => validBody({ bucketName: 'ab' }) },
      { name: 'bucketName with a slash', body: () => validBody({ bucketName: 'a/b/c' }) },
      { name: 'no accessKeyId', body: () => ({ ...validBody(), accessKeyId: undefined }) },
      { name: 'accessKeyId with a space', body: () => validBody({ accessKeyId: 'AK ID' }) },
      { name: 'no secretKey', body: () => ({ ...validBody(), secretKey: undefined }) },
      { name: 'empty secretKey', body: () => validBody({ secretKey: '' }) },
      { name: 'secretKey not a string', body: () => validBody({ secretKey: 12345 }) },
      { name: 'unknown provider', body: () => validBody({ provider: 'gcs' }) },
      { name: 'region with a space', body: () => validBody({ region: 'us east' }) },
      { name: 'empty region', body: () => validBody({ region: '' }) },
      {
        name: 'an unknown field (a misspelt secret is not silently dropped)',
        body: () => ({ ...validBody(), secretAccessKey: 'x' }),
      },
    ]
    for (const r of refused) {
      it(`${r.name}: 400 invalid_request`, async () => {
        const before = await listed()
        const reply = await call('POST', BASE, owner.token, r.body())
        expect(reply.status, reply.text).toBe(400)
        expect(reply.body).toMatchObject({
          error: 'invalid_request',
          message: expect.any(String),
          details: expect.any(Object),
        })
        expect(reply.text).not.toContain(SECRET)
        expect(await listed()).toEqual(before)
      })
    }

    it('a body that is not JSON: 415, nothing saved', async () => {
      const before = await listed()
      const reply = await server.request('POST', BASE, {
        token: owner.token,
        rawBody: 'label=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      })
      expect(reply.status, reply.text).toBe(415)
      expect(await listed()).toEqual(before)
    })
  })
})

describe('GET /api/v1/storage-connections', () => {
  it("lists the project's connections under data, oldest first, without secrets", async () => {
    const a = await create({ label: 'first' })
    const b = await create({ label: 'second' })
    const reply = await call('GET', BASE, owner.token)
    expect(reply.status).toBe(200)
    expect(Object.keys(reply.body)).toEqual(['data'])
    const rows = reply.body.data as { id: string; createdAt: number }[]
    expect(rows.map((c) => c.id)).toEqual(expect.arrayContaining([a.id, b.id]))
    // Oldest first; connections made within the same second in id order.
    const order = (x: { id: string; createdAt: number }, y: { id: string; createdAt: number }) =>
      x.createdAt - y.createdAt || (x.id < y.id ? -1 : 1)
    expect(rows).toEqual([...rows].sort(order))
    for (const connection of reply.body.data as Record<string, unknown>[])
      expect(connection).not.toHaveProperty('secretKey')
    expect(reply.text).not.toContain(SECRET)
  })

  it('GET /:id answers one connection under data; an unknown id is 404 not_found', async () => {
    const made = await create({ label: 'single' })
    const reply = await call('GET', `${BASE}/${made.id}`, owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ data: made })
    const missing = await call('GET', `${BASE}/${'0'.repeat(32)}`, owner.token)
    expect(missing.status).toBe(404)
    expect(missing.body).toMatchObject({ error: 'not_found' })
  })
})

describe('the secret key', () => {
  it('is stored sealed (AES-256-GCM): the row holds no plaintext', async () => {
    const made = await create({ label: 'sealed' })
    const row = await storedRow(made.id)
    expect(row).toBeDefined()
    expect(row!.secret_key_sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/)
    expect(JSON.stringify(row)).not.toContain(SECRET)
    expect(JSON.stringify(row)).not.toContain(Buffer.from(SECRET).toString('base64url'))
    // Two saves of the same secret seal differently (a fresh IV each time).
    const again = await create({ label: 'sealed twice' })
    expect((await storedRow(again.id))!.secret_key_sealed).not.toBe(row!.secret_key_sealed)
  })
})

describe('POST /api/v1/storage-connections/:id/test', () => {
  it('lists one key of the bucket with the stored credentials: 200 success true', async () => {
    const made = await create({ label: 'tested' })
    const reply = await testConnection(made.id)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ success: true, message: expect.any(String) })
  })

  it("a wrong secret fails cleanly: 200 success false, invalid_credentials, nothing of the SDK's text or either secret", async () => {
    const made = await create({ label: 'wrong secret', secretKey: WRONG_SECRET })
    const reply = await testConnection(made.id)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      success: false,
      reason: 'invalid_credentials',
      message: expect.any(String),
      remoteStatus: 403,
      remoteCode: 'SignatureDoesNotMatch',
    })
    for (const needle of [WRONG_SECRET, SECRET, 'StringToSign', 'CanonicalRequest', 'stack', '$metadata'])
      expect(reply.text).not.toContain(needle)
  })

  const failures: { name: string; body: () => Record<string, unknown>; reason: string; remoteCode?: string }[] = [
    {
      name: 'an unknown access key id',
      body: () => validBody({ accessKeyId: 'NOT-A-KEY' }),
      reason: 'invalid_credentials',
      remoteCode: 'InvalidAccessKeyId',
    },
    {
      name: 'a bucket that does not exist',
      body: () => validBody({ bucketName: 'no-such-bucket' }),
      reason: 'bucket_not_found',
      remoteCode: 'NoSuchBucket',
    },
    {
      name: 'a closed port',
      body: () => validBody({ endpoint: `http://127.0.0.1:${closedPort}` }),
      reason: 'unreachable',
    },
    {
      name: 'a server that is not S3 (Plinth itself)',
      body: () => validBody({ endpoint: server.url }),
      reason: 'unexpected_response',
    },
    {
      name: 'a web server answering 200 with HTML',
      body: () => validBody({ endpoint: webServer.url }),
      reason: 'unexpected_response',
    },
  ]
  let closedPort = 0
  let webServer: { url: string; close: () => void }
  beforeAll(async () => {
    closedPort = await freePort()
    const web = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Welcome</body></html>'),
    )
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve))
    webServer = { url: `http://127.0.0.1:${(web.address() as AddressInfo).port}`, close: () => web.close() }
  })
  afterAll(() => webServer?.close())
  for (const f of failures) {
    it(`${f.name}: 200 success false, ${f.reason}`, async () => {
      const made = await create(f.body())
      const reply = await testConnection(made.id)
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body).toMatchObject({ success: false, reason: f.reason, message: expect.any(String) })
      expect(Object.keys(reply.body).sort()).toEqual(['message', 'reason', 'remoteCode', 'remoteStatus', 'success'])
      if (f.remoteCode) expect(reply.body.remoteCode).toBe(f.remoteCode)
      expect(reply.text).not.toContain(SECRET)
    })
  }

  it('an unknown connection is 404 not_found', async () => {
    const reply = await testConnection('0'.repeat(32))
    expect(reply.status).toBe(404)
    expect(reply.body.error).toBe('not_found')
  })
})

describe('PUT /api/v1/storage-connections/:id', () => {
  it('changes only the fields sent; without secretKey the stored one is kept and the test still succeeds', async () => {
    const made = await create({ label: 'before' })
    const sealed = (await storedRow(made.id))!.secret_key_sealed
    const reply = await call('PUT', `${BASE}/${made.id}`, owner.token, { label: 'after', region: 'us-east-1' })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      data: { ...made, label: 'after', region: 'us-east-1', updatedAt: expect.any(Number) },
    })
    expect(reply.body.data.updatedAt).toBeGreaterThanOrEqual(made.updatedAt)
    expect((await storedRow(made.id))!.secret_key_sealed).toBe(sealed)
    expect((await call('GET', `${BASE}/${made.id}`, owner.token)).body.data).toEqual(reply.body.data)
    expect((await testConnection(made.id)).body).toMatchObject({ success: true })
  })

  it('a new secretKey replaces the stored one: a wrong one fails the test, the right one passes again', async () => {
    const made = await create({ label: 'rotated' })
    const wrong = await call('PUT', `${BASE}/${made.id}`, owner.token, { secretKey: WRONG_SECRET })
    expect(wrong.status, wrong.text).toBe(200)
    expect(wrong.text).not.toContain(WRONG_SECRET)
    expect(JSON.stringify(await storedRow(made.id))).not.toContain(WRONG_SECRET)
    expect((await testConnection(made.id)).body).toMatchObject({ success: false, reason: 'invalid_credentials' })
    const right = await call('PUT', `${BASE}/${made.id}`, owner.token, { secretKey: SECRET })
    expect(right.status, right.text).toBe(200)
    expect((await testConnection(made.id)).body).toMatchObject({ success: true })
  })

  it('an empty secretKey is refused (400) and changes nothing', async () => {
    const made = await create({ label: 'kept' })
    const row = await storedRow(made.id)
    const reply = await call('PUT', `${BASE}/${made.id}`, owner.token, { label: 'changed', secretKey: '' })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body).toMatchObject({
      error: 'invalid_request',
      details: { issues: [expect.objectContaining({ location: 'body.secretKey' })] },
    })
    expect(await storedRow(made.id)).toEqual(row)
    expect((await testConnection(made.id)).body).toMatchObject({ success: true })
  })

  const refused: { name: string; body: Record<string, unknown> }[] = [
    { name: 'an unknown field', body: { secretAccessKey: 'x' } },
    { name: 'a null region', body: { region: null } },
    { name: 'an endpoint that is not http(s)', body: { endpoint: 'file:///etc/passwd' } },
    { name: 'an unknown provider', body: { provider: 'azure' } },
    { name: 'an empty label', body: { label: '' } },
  ]
  for (const r of refused) {
    it(`${r.name}: 400, nothing changed`, async () => {
      const made = await create({ label: 'untouched' })
      const row = await storedRow(made.id)
      const reply = await call('PUT', `${BASE}/${made.id}`, owner.token, r.body)
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
      expect(await storedRow(made.id)).toEqual(row)
    })
  }

  it('an empty body changes nothing and answers the connection', async () => {
    const made = await create({ label: 'as is' })
    const reply = await call('PUT', `${BASE}/${made.id}`, owner.token, {})
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ data: made })
  })

  it('an unknown id is 404 not_found', async () => {
    const reply = await call('PUT', `${BASE}/${'0'.repeat(32)}`, owner.token, { label: 'x' })
    expect(reply.status).toBe(404)
    expect(reply.body.error).toBe('not_found')
  })
})

describe('DELETE /api/v1/storage-connections/:id', () => {
  it('204 with no body; the connection is gone and the bucket and its objects are untouched', async () => {
    const made = await create({ label: 'doomed' })
    const client = s3Client()
    await client.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: 'keep/me.txt', Body: 'still here', ContentType: 'text/plain' }),
    )
    const reply = await call('DELETE', `${BASE}/${made.id}`, owner.token)
    expect(reply.status, reply.text).toBe(204)
    expect(reply.text).toBe('')
    expect((await call('GET', `${BASE}/${made.id}`, owner.token)).status).toBe(404)
    expect((await listed()).map((c) => c.id)).not.toContain(made.id)
    expect(await storedRow(made.id)).toBeUndefined()
    const object = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'keep/me.txt' }))
    expect(await object.Body!.transformToString()).toBe('still here')
    client.destroy()
  })

  it('a second delete, or an unknown id, is 404 not_found', async () => {
    const made = await create({ label: 'twice' })
    expect((await call('DELETE', `${BASE}/${made.id}`, owner.token)).status).toBe(204)
    const again = await call('DELETE', `${BASE}/${made.id}`, owner.token)
    expect(again.status).toBe(404)
    expect(again.body.error).toBe('not_found')
    expect((await testConnection(made.id)).status).toBe(404)
    expect((await call('PUT', `${BASE}/${made.id}`, owner.token, { label: 'x' })).status).toBe(404)
  })
})

describe('the deprecated /api/storage-connections alias', () => {
  it('answers as the versioned path, with Deprecation and a Link to the successor', async () => {
    const made = await create({ label: 'via alias' })
    const list = await call('GET', '/api/storage-connections', owner.token)
    expect(list.status, list.text).toBe(200)
    expect(list.body.data).toContainEqual(made)
    expect(list.headers.get('deprecation')).toBe('true')
    expect(list.headers.get('link')).toBe('</api/v1/storage-connections>; rel="successor-version"')
    expect(list.headers.get('x-api-version')).toBe('v1')

    const one = await call('GET', `/api/storage-connections/${made.id}`, owner.token)
    expect(one.status).toBe(200)
    expect(one.body).toEqual({ data: made })
    expect(one.headers.get('link')).toBe(`</api/v1/storage-connections/${made.id}>; rel="successor-version"`)

    const created = await call('POST', '/api/storage-connections', owner.token, validBody({ label: 'made via alias' }))
    expect(created.status, created.text).toBe(201)
    expect(created.headers.get('deprecation')).toBe('true')
    expect(created.text).not.toContain(SECRET)
    const tested = await call('POST', `/api/storage-connections/${created.body.data.id}/test`, owner.token)
    expect(tested.body).toMatchObject({ success: true })
    const removed = await call('DELETE', `/api/storage-connections/${created.body.data.id}`, owner.token)
    expect(removed.status).toBe(204)
    expect(removed.headers.get('deprecation')).toBe('true')
  })

  it('the versioned path carries no Deprecation header', async () => {
    const reply = await call('GET', BASE, owner.token)
    expect(reply.headers.get('deprecation')).toBeNull()
    expect(reply.headers.get('link')).toBeNull()
  })
})

describe('permissions (system/storage-connections)', () => {
  let viewer: Account
  let editor: Account
  let someId = ''
  beforeAll(async () => {
    viewer = await createAccount(server, owner.token, { role: 'viewer' })
    editor = await createAccount(server, owner.token, { role: 'editor' })
    someId = (await create({ label: 'guarded' })).id
  })

  const denied = (action: string) => ({
    error: 'forbidden',
    details: { resource: 'system/storage-connections', action },
  })
  runScenarios(
    () => server,
    [
      { name: 'anonymous list', method: 'GET', path: BASE, status: 401, contains: { error: 'unauthorized' } },
      {
        name: 'anonymous create',
        method: 'POST',
        path: BASE,
        body: { label: 'x' },
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'anonymous via the alias',
        method: 'GET',
        path: '/api/storage-connections',
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'a viewer lists',
        method: 'GET',
        path: BASE,
        as: () => viewer.token,
        status: 403,
        contains: denied('read'),
      },
      {
        name: 'an editor lists',
        method: 'GET',
        path: BASE,
        as: () => editor.token,
        status: 403,
        contains: denied('read'),
      },
      {
        name: 'an editor creates',
        method: 'POST',
        path: BASE,
        as: () => editor.token,
        body: { label: 'x' },
        status: 403,
        contains: denied('create'),
      },
    ],
  )

  it('an unauthorised caller learns nothing: 403 before validation and before the lookup', async () => {
    for (const [method, path] of [
      ['GET', `${BASE}/${someId}`],
      ['PUT', `${BASE}/${someId}`],
      ['DELETE', `${BASE}/${someId}`],
      ['POST', `${BASE}/${someId}/test`],
      ['GET', `${BASE}/nope`],
    ] as const) {
      const reply = await call(method, path, viewer.token, method === 'PUT' ? { label: 'by viewer' } : undefined)
      expect(reply.status, `${method} ${path}`).toBe(403)
    }
    expect((await call('GET', `${BASE}/${someId}`, owner.token)).body.data.label).toBe('guarded')
  })

  it('read lists and gets; create, update, delete and test need their grants', async () => {
    const reader = await accountWithGrants(server, owner.token, [
      { resource: 'system/storage-connections', action: 'read' },
    ])
    expect((await listed(reader.token)).map((c) => c.id)).toContain(someId)
    expect((await call('GET', `${BASE}/${someId}`, reader.token)).status).toBe(200)
    expect((await call('POST', BASE, reader.token, validBody({ label: 'by reader' }))).body).toMatchObject(
      denied('create'),
    )
    expect((await call('PUT', `${BASE}/${someId}`, reader.token, { label: 'by reader' })).body).toMatchObject(
      denied('update'),
    )
    expect((await call('POST', `${BASE}/${someId}/test`, reader.token)).body).toMatchObject(denied('update'))
    expect((await call('DELETE', `${BASE}/${someId}`, reader.token)).body).toMatchObject(denied('delete'))
    expect((await listed()).map((c) => c.label)).not.toContain('by reader')
  })

  it('create, update and delete grants each open their own endpoint', async () => {
    const creator = await accountWithGrants(server, owner.token, [
      { resource: 'system/storage-connections', action: 'create' },
    ])
    const made = await create({ label: 'by creator' }, creator.token)
    expect((await call('GET', BASE, creator.token)).status).toBe(403)
    const updater = await accountWithGrants(server, owner.token, [
      { resource: 'system/storage-connections', action: 'update' },
    ])
    expect((await call('PUT', `${BASE}/${made.id}`, updater.token, { label: 'by updater' })).status).toBe(200)
    expect((await testConnection(made.id, updater.token)).body).toMatchObject({ success: true })
    expect((await call('DELETE', `${BASE}/${made.id}`, updater.token)).status).toBe(403)
    const deleter = await accountWithGrants(server, owner.token, [
      { resource: 'system/storage-connections', action: 'delete' },
    ])
    expect((await call('DELETE', `${BASE}/${made.id}`, deleter.token)).status).toBe(204)
  })

  it('manage does everything; an admin does everything', async () => {
    const manager = await accountWithGrants(server, owner.token, [
      { resource: 'system/storage-connections', action: 'manage' },
    ])
    const admin = await createAccount(server, owner.token, { role: 'admin' })
    for (const token of [manager.token, admin.token]) {
      const made = await create({ label: 'by manager or admin' }, token)
      expect((await listed(token)).map((c) => c.id)).toContain(made.id)
      expect((await call('PUT', `${BASE}/${made.id}`, token, { region: 'eu-central-1' })).status).toBe(200)
      expect((await testConnection(made.id, token)).body).toMatchObject({ success: true })
      expect((await call('DELETE', `${BASE}/${made.id}`, token)).status).toBe(204)
    }
  })
})

describe('projects', () => {
  it("another project's connection is 404 everywhere and absent from the list; nothing of it changes", async () => {
    const project = await call('POST', '/api/v1/projects', owner.token, { name: uniqueName('storage') })
    expect(project.status, project.text).toBe(201)
    const there = { 'X-Project-Id': project.body.data.id as string }
    const theirs = await call('POST', BASE, owner.token, validBody({ label: 'theirs' }), there)
    expect(theirs.status, theirs.text).toBe(201)
    const id = theirs.body.data.id as string
    const row = await storedRow(id)
    // Acting in the default project, as the owner and as its admin.
    const admin = await createAccount(server, owner.token, { role: 'admin' })
    for (const token of [owner.token, admin.token]) {
      expect((await listed(token)).map((c) => c.id)).not.toContain(id)
      for (const [method, path, body] of [
        ['GET', `${BASE}/${id}`, undefined],
        ['PUT', `${BASE}/${id}`, { label: 'hijacked', secretKey: WRONG_SECRET }],
        ['POST', `${BASE}/${id}/test`, undefined],
        ['DELETE', `${BASE}/${id}`, undefined],
      ] as const) {
        const reply = await call(method, path, token, body)
        expect(reply.status, `${method} ${path}`).toBe(404)
        expect(reply.body.error).toBe('not_found')
      }
    }
    expect(await storedRow(id)).toEqual(row)
    expect((await listed(owner.token, there)).map((c) => c.id)).toEqual([id])
  })
})

describe('audit', () => {
  it('create, update and delete are recorded, with field names but never the secret', async () => {
    const made = await create({ label: 'audited' })
    await call('PUT', `${BASE}/${made.id}`, owner.token, { label: 'audited again', secretKey: WRONG_SECRET })
    await call('DELETE', `${BASE}/${made.id}`, owner.token)
    const entries = async (action: string) => {
      const reply = await call('GET', `/api/v1/audit-log?action=${action}&limit=100`, owner.token)
      expect(reply.status, reply.text).toBe(200)
      return (
        reply.body.data as { target: { id: string } | null; details: Record<string, unknown>; actor: { id: string } }[]
      ).filter((e) => e.target?.id === made.id)
    }
    expect(await entries('storage_connection.created')).toEqual([
      expect.objectContaining({
        actor: { type: 'user', id: owner.id },
        details: { label: 'audited', provider: 's3', endpoint: s3.url, bucketName: BUCKET },
      }),
    ])
    expect(await entries('storage_connection.updated')).toEqual([
      expect.objectContaining({ details: { label: 'audited again', changed: ['label', 'secretKey'] } }),
    ])
    expect(await entries('storage_connection.deleted')).toEqual([
      expect.objectContaining({ details: expect.objectContaining({ label: 'audited again' }) }),
    ])
  })
})

describe('private addresses (ALLOW_PRIVATE_NETWORK off)', () => {
  let strict: TestServer
  let strictOwner: Account
  beforeAll(async () => {
    strict = await startServer()
    strictOwner = await signUpOwner(strict)
  })
  afterAll(async () => {
    await strict?.stop()
  })
  const post = (endpoint: string) =>
    strict.request('POST', BASE, { token: strictOwner.token, body: validBody({ endpoint }) })

  const refused = [
    ...[
      'http://127.0.0.1:9000',
      'http://localhost:9000',
      'http://api.localhost',
      'http://[::1]:9000',
      'http://169.254.169.254',
      'http://10.0.0.5',
      'https://192.168.1.10',
      'http://2130706433',
      'http://0.0.0.0',
    ],
    // IPv6 forms that carry a refused IPv4 address (or, for Teredo and NAT64 local-use, any)
    ...[
      'http://[::ffff:127.0.0.1]',
      'http://[::ffff:0:127.0.0.1]:9000',
      'http://[::ffff:0:a9fe:a9fe]',
      'http://[::127.0.0.1]:9000',
      'http://[64:ff9b::127.0.0.1]:9000',
    ],
    ...[
      'http://[64:ff9b:1::a00:5]',
      'http://[2002:7f00:1::1]:9000',
      'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]',
      'http://[2606:4700::5efe:10.0.0.5]',
    ],
  ]
  for (const endpoint of refused) {
    it(`${endpoint} is refused: 400 invalid_request naming endpoint; nothing saved`, async () => {
      const reply = await post(endpoint)
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body).toMatchObject({ error: 'invalid_request', details: { fields: ['endpoint'] } })
      const list = await strict.request('GET', BASE, { token: strictOwner.token })
      expect(list.body.data).toEqual([])
    })
  }

  it('a public address is saved (nothing is contacted on save); moving it onto a private one is refused', async () => {
    const reply = await post('https://203.0.114.9:9000')
    expect(reply.status, reply.text).toBe(201)
    for (const endpoint of ['http://127.0.0.1:9000', 'http://[::ffff:0:127.0.0.1]:9000']) {
      const moved = await strict.request('PUT', `${BASE}/${reply.body.data.id}`, {
        token: strictOwner.token,
        body: { endpoint },
      })
      expect(moved.status, moved.text).toBe(400)
      expect(moved.body).toMatchObject({ error: 'invalid_request', details: { fields: ['endpoint'] } })
    }
    const stored = await strict.request('GET', `${BASE}/${reply.body.data.id}`, { token: strictOwner.token })
    expect(stored.body.data.endpoint).toBe('https://203.0.114.9:9000')
  })

  it('public addresses in IPv6 forms that carry an IPv4 address are saved', async () => {
    for (const endpoint of [
      'http://[::ffff:8.8.8.8]',
      'http://[64:ff9b::808:808]',
      'http://[2002:808:808::1]',
      'https://[2606:4700:4700::1111]',
    ]) {
      const reply = await post(endpoint)
      expect(reply.status, `${endpoint}: ${reply.text}`).toBe(201)
    }
  })

  // The machine's own name resolves to loopback on most hosts: it passes the save check (names are not
  // resolved then) and is refused when the socket resolves it, so the test never reaches s3rver.
  it.runIf(own !== null && isBlockedAddress(own.address))(
    'a name that resolves to a private address is refused at connection time: blocked_address',
    async () => {
      const port = new URL(s3.url).port
      const saved = await post(`http://${hostname()}:${port}`)
      expect(saved.status, saved.text).toBe(201)
      const reply = await strict.request('POST', `${BASE}/${saved.body.data.id}/test`, { token: strictOwner.token })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body).toMatchObject({ success: false, reason: 'blocked_address' })
    },
  )
})

describe('OpenAPI', () => {
  it('documents every endpoint with its permission; the response shape has no secretKey, the request bodies do', async () => {
    const doc = (await call('GET', '/api/openapi.json', undefined)).body
    const paths = doc.paths as Record<
      string,
      Record<string, { operationId: string; 'x-permission': string; responses: Record<string, unknown> }>
    >
    expect(paths['/api/v1/storage-connections']!.get).toMatchObject({
      operationId: 'storageConnections.list',
      'x-permission': 'system/storage-connections:read',
    })
    expect(paths['/api/v1/storage-connections']!.post).toMatchObject({
      operationId: 'storageConnections.create',
      'x-permission': 'system/storage-connections:create',
    })
    expect(paths['/api/v1/storage-connections/{id}']!.put).toMatchObject({
      'x-permission': 'system/storage-connections:update',
    })
    expect(paths['/api/v1/storage-connections/{id}']!.delete!.responses).toHaveProperty('204')
    expect(paths['/api/v1/storage-connections/{id}/test']!.post).toMatchObject({
      'x-permission': 'system/storage-connections:update',
    })
    const shape = doc.components.schemas.StorageConnection
    expect(Object.keys(shape.properties)).not.toContain('secretKey')
    expect(JSON.stringify(paths['/api/v1/storage-connections']!.post)).toContain('secretKey')
  })
})

describe('nothing leaks', () => {
  it('no reply of this file, no log line and no audit entry carries either secret', async () => {
    const audit = await call('GET', '/api/v1/audit-log?limit=100', owner.token)
    expect(replies.length).toBeGreaterThan(50)
    for (const reply of replies) {
      expect(reply.text).not.toContain(SECRET)
      expect(reply.text).not.toContain(WRONG_SECRET)
    }
    const logs = server.logs.join('\n')
    expect(logs).toContain('storage connection test failed')
    for (const text of [logs, audit.text]) {
      expect(text).not.toContain(SECRET)
      expect(text).not.toContain(WRONG_SECRET)
    }
  })
})

/** An S3 client for the test's own use (writing an object the delete must leave alone). */
function s3Client(): S3Client {
  return new S3Client({
    endpoint: s3.url,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
}

interface S3rverInstance {
  middleware: ((ctx: KoaContext, next: () => Promise<void>) => Promise<void>)[]
  run(): Promise<AddressInfo>
  close(): Promise<void>
}
interface KoaContext {
  method: string
  path: string
  querystring: string
  status: number
  type: string
  body: unknown
  get(name: string): string
}

/**
 * s3rver on a free loopback port with one bucket. s3rver accepts any SigV4 signature from a known access
 * key id, so a layer in front checks signatures against the secrets given: a wrong secret fails as it
 * would on S3 (403 SignatureDoesNotMatch).
 */
async function startS3(secrets: Map<string, string>): Promise<{ url: string; stop: () => Promise<void> }> {
  const S3rver = createRequire(import.meta.url)('s3rver') as new (options: Record<string, unknown>) => S3rverInstance
  const directory = mkdtempSync(join(tmpdir(), 'plinth-s3rver-'))
  const instance = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  })
  instance.middleware.unshift(async (ctx, next) => {
    const auth =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
        ctx.get('authorization'),
      )
    const secret = auth ? secrets.get(auth[1]!) : undefined
    if (!auth || secret === undefined) return next()
    const [, , date, region, service, signed, signature] = auth as unknown as string[]
    const headers = signed!
      .split(';')
      .map((h) => `${h}:${ctx.get(h).trim().replace(/\s+/g, ' ')}\n`)
      .join('')
    const canonical = [
      ctx.method,
      ctx.path,
      canonicalQuery(ctx.querystring),
      headers,
      signed,
      ctx.get('x-amz-content-sha256'),
    ].join('\n')
    const scope = `${date}/${region}/${service}/aws4_request`
    const toSign = [
      'AWS4-HMAC-SHA256',
      ctx.get('x-amz-date'),
      scope,
      createHash('sha256').update(canonical).digest('hex'),
    ].join('\n')
    let key: Buffer = createHmac('sha256', `AWS4${secret}`).update(date!).digest()
    for (const part of [region!, service!, 'aws4_request']) key = createHmac('sha256', key).update(part).digest()
    if (createHmac('sha256', key).update(toSign).digest('hex') === signature) return next()
    ctx.status = 403
    ctx.type = 'application/xml'
    ctx.body =
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided.</Message></Error>'
  })
  const address = await instance.run()
  return {
    url: `http://127.0.0.1:${address.port}`,
    async stop() {
      await instance.close()
      rmSync(directory, { recursive: true, force: true })
    },
  }
}

function canonicalQuery(query: string): string {
  const encode = (s: string) =>
    encodeURIComponent(s).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)
  return query
    .split('&')
    .filter((p) => p !== '')
    .map((p) => {
      const at = p.indexOf('=')
      const [k, v] = at === -1 ? [p, ''] : [p.slice(0, at), p.slice(at + 1)]
      return [encode(decodeURIComponent(k)), encode(decodeURIComponent(v.replace(/\+/g, ' ')))] as const
    })
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
}
