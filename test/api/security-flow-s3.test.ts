import { randomBytes } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isBlockedAddress } from '../../src/lib/outbound/index.js'
import { tableResolver } from '../../src/lib/outbound/test-servers.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, setGrants, signUpOwner, type Account } from '../support/identity.js'
import { startS3Store, type TestS3Store } from '../support/s3-store.js'
import { activeFlow, executeToEnd, type Call } from './automate-support.js'

/**
 * Security review (issue 25, deliver 5): s3_action attacked by a low role over HTTP. Mallory's custom role
 * holds system/storage-connections read and update (she may use the project's bucket) and system/automate
 * read and execute; the flows, published by the owner, run as her. One store (s3rver) holds two buckets:
 * `flows`, the bucket of project A's connection, and `other`, with a secret, the bucket of project B's.
 * - a key with a `.` or `..` segment (in any spelling: `\`, NFKC look-alikes) would leave the connection's
 *   bucket wherever the request path is normalised (s3rver does it: `../other/secret.txt` reads `other`,
 *   `../../x` writes outside its directory): refused before the store is contacted, on every keyed action;
 * - a connection of project B is not_found from project A, for mallory and for the super_admin acting in A.
 * The store is reached virtual-host style as `<bucket>.s3.test.amazonaws.com`, names resolving to
 * 127.0.0.1 that the address rule is narrowed to let through (s3rver reads them as the bucket).
 */
const HOST = 's3.test.amazonaws.com'
const MARK = `pwn${randomBytes(5).toString('hex')}`
const secret = `other-bucket-secret-${randomBytes(6).toString('hex')}`
let store: TestS3Store
let direct: S3Client
let server: TestServer
let owner: Account
let mallory: Account
let bId: string
let aConnection: string
let bConnection: string
let s3Flow: string

const as =
  (token: string): Call =>
  (method, path, body) =>
    server.request(method, path, { token, body })
const runAs = (account: Account, body: Record<string, unknown>) =>
  executeToEnd(as(account.token), as(owner.token), s3Flow, body)
const stepOf = (run: any, key: string) => run.stepLogs.find((s: any) => s.key === key)

/** The keys of a bucket, read straight from the store. */
async function keysOf(bucket: string): Promise<string[]> {
  const listed = await direct.send(new ListObjectsV2Command({ Bucket: bucket }))
  return (listed.Contents ?? []).map((o) => o.Key ?? '').sort()
}
async function contentOf(bucket: string, key: string): Promise<string> {
  return (await direct.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString()
}

beforeAll(async () => {
  store = await startS3Store('flows')
  direct = new S3Client({
    endpoint: store.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: store.credentials,
    maxAttempts: 1,
  })
  await direct.send(new CreateBucketCommand({ Bucket: 'other' }))
  await direct.send(new PutObjectCommand({ Bucket: 'other', Key: 'secret.txt', Body: secret }))
  await direct.send(new PutObjectCommand({ Bucket: 'flows', Key: 'inside/hello.txt', Body: 'hello' }))

  const resolve = tableResolver({ [`flows.${HOST}`]: ['127.0.0.1'], [`other.${HOST}`]: ['127.0.0.1'] })
  server = await startServer(
    {},
    { outbound: { resolve, isBlocked: (address, host) => !host.endsWith(`.${HOST}`) && isBlockedAddress(address) } },
  )
  owner = await signUpOwner(server)
  const project = await server.request('POST', '/api/v1/projects', { token: owner.token, body: { name: 'Project B' } })
  expect(project.status, project.text).toBe(201)
  bId = project.body.data.id
  const port = new URL(store.endpoint).port
  const connection = (bucketName: string) => ({
    label: bucketName,
    provider: 'minio',
    endpoint: `http://${HOST}:${port}`,
    bucketName,
    accessKeyId: store.credentials.accessKeyId,
    secretKey: store.credentials.secretAccessKey,
  })
  const inA = await server.request('POST', '/api/v1/storage-connections', {
    token: owner.token,
    body: connection('flows'),
  })
  expect(inA.status, inA.text).toBe(201)
  aConnection = inA.body.data.id
  const inB = await server.request('POST', '/api/v1/storage-connections', {
    token: owner.token,
    headers: { 'X-Project-Id': bId },
    body: connection('other'),
  })
  expect(inB.status, inB.text).toBe(201)
  bConnection = inB.body.data.id

  const role = await as(owner.token)('POST', '/api/v1/roles', { name: 'bucketeer' })
  expect(role.status, role.text).toBe(201)
  await setGrants(server, owner.token, 'bucketeer', [
    { resource: 'system/storage-connections', action: 'read' },
    { resource: 'system/storage-connections', action: 'update' },
    { resource: 'system/automate', action: 'read' },
    { resource: 'system/automate', action: 'execute' },
  ])
  mallory = await createAccount(server, owner.token, { role: 'bucketeer' })
  s3Flow = await activeFlow(as(owner.token), 's3', [
    {
      key: 'op',
      type: 's3_action',
      config: {
        connectionId: '{{$trigger.body.c}}',
        action: '{{$trigger.body.action}}',
        key: '{{$trigger.body.key}}',
        content: `planted-${MARK}`,
      },
    },
  ])
})
afterAll(async () => {
  await server?.stop()
  direct?.destroy()
  await store?.stop()
})

describe("a key leaving the connection's bucket", () => {
  it('the store really resolves such keys (the premise): straight from the SDK, ../other/secret.txt in `flows` reads `other`', async () => {
    expect(await contentOf('flows', '../other/secret.txt')).toBe(secret)
  })

  it.each([
    ['../other/secret.txt'],
    ['x/../../other/secret.txt'],
    ['..\\other\\secret.txt'],
    ['./../other/secret.txt'],
    ['/../other/secret.txt'],
    ['．．/other/secret.txt'],
    ['‥/other/secret.txt'],
    ['x／．．／．．／other／secret.txt'],
    [`../../${MARK}.txt`],
    [`../other/${MARK}.txt`],
    ['..'],
    ['secret.txt\u0000'],
  ])(
    '%j is refused (invalid_config) for get, head, delete and put; nothing is read, written or removed',
    async (key) => {
      const before = { flows: await keysOf('flows'), other: await keysOf('other') }
      // put last: a delete after it would remove what an escaped put left on disk.
      for (const action of ['get', 'head', 'delete', 'put']) {
        const run = await runAs(mallory, { c: aConnection, action, key })
        expect(run.status, `${action} ${key}`).toBe('failed')
        expect(run.error, `${action} ${key}`).toMatchObject({
          code: 'invalid_config',
          step: 'op',
          message: expect.stringContaining('config.key'),
        })
        expect(JSON.stringify(run)).not.toContain(secret)
      }
      expect({ flows: await keysOf('flows'), other: await keysOf('other') }).toEqual(before)
      expect(await contentOf('other', 'secret.txt')).toBe(secret)
      // s3rver keeps its buckets in a temp folder: a key that climbed out of it would land beside it.
      expect(readdirSync(tmpdir()).filter((name) => name.includes(MARK))).toEqual([])
    },
  )

  it('a flow saved with such a key as a literal is refused on save (422 naming config.key)', async () => {
    const reply = await as(owner.token)('POST', '/api/v1/automate/flows', {
      name: 'literal',
      triggerType: 'manual',
      triggerConfig: {},
      operations: [
        {
          key: 'op',
          type: 's3_action',
          config: { connectionId: aConnection, action: 'get', key: '../other/secret.txt' },
        },
      ],
    })
    expect(reply.status, reply.text).toBe(422)
    expect(reply.body).toMatchObject({ error: 'validation_error', message: expect.stringContaining('config.key') })
  })

  it('the same flow with keys inside the bucket works for mallory (the control)', async () => {
    const got = await runAs(mallory, { c: aConnection, action: 'get', key: 'inside/hello.txt' })
    expect(got.status, JSON.stringify(got.error)).toBe('completed')
    expect(stepOf(got, 'op').output).toMatchObject({ content: 'hello' })
    const put = await runAs(mallory, { c: aConnection, action: 'put', key: 'inside/a..b/.../x.txt' })
    expect(put.status, JSON.stringify(put.error)).toBe('completed')
    expect(await contentOf('flows', 'inside/a..b/.../x.txt')).toBe(`planted-${MARK}`)
  })
})

describe('a storage connection of another project', () => {
  it.each([
    ['get', 'secret.txt'],
    ['head', 'secret.txt'],
    ['put', 'planted.txt'],
    ['delete', 'secret.txt'],
  ])(
    "%s through B's connection from A is not_found, for mallory and the super_admin acting in A; B's bucket unchanged",
    async (action, key) => {
      const before = await keysOf('other')
      for (const account of [mallory, owner]) {
        const run = await runAs(account, { c: bConnection, action, key })
        expect(run.status, account.email).toBe('failed')
        expect(run.error, account.email).toMatchObject({ code: 'not_found', step: 'op' })
        expect(JSON.stringify(run)).not.toContain(secret)
      }
      expect(await keysOf('other')).toEqual(before)
      expect(await contentOf('other', 'secret.txt')).toBe(secret)
    },
  )

  it('nor can A read, change or test it over HTTP (404), while B sees it', async () => {
    for (const [method, path, body] of [
      ['GET', '', undefined],
      ['PUT', '', { bucketName: 'flows' }],
      ['POST', '/test', {}],
      ['DELETE', '', undefined],
    ] as const) {
      const reply = await server.request(method, `/api/v1/storage-connections/${bConnection}${path}`, {
        token: owner.token,
        body,
      })
      expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(404)
    }
    const there = await server.request('GET', `/api/v1/storage-connections/${bConnection}`, {
      token: owner.token,
      headers: { 'X-Project-Id': bId },
    })
    expect(there.body.data).toMatchObject({ id: bConnection, bucketName: 'other' })
  })
})
