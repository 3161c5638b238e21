import { createHash, randomBytes } from 'node:crypto'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isBlockedAddress } from '../../src/lib/outbound/index.js'
import { tableResolver } from '../../src/lib/outbound/test-servers.js'
import { writeBmp } from '../../src/modules/operations/bmp.js'
import { principals } from '../../src/lib/principal.js'
import type { ObjectStorage } from '../../src/lib/storage/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, roleId, signUpOwner, type Account } from '../support/identity.js'
import { s3Settings, startS3Store, type TestS3Store } from '../support/s3-store.js'
import { activeFlow, executeToEnd, type Call } from './automate-support.js'

/**
 * The Files operations in real flow runs over HTTP (issue 17 item 4): file_upload, file_read and
 * file_transform go through the files service as the run's user (a flow acting for one editor reaches
 * none of another's files it could not reach over HTTP); every refused file_transform leaves no new file
 * row and no new stored object; s3_action reaches a storage connection's bucket (s3rver) under the
 * outbound-address rule. ALLOW_PRIVATE_NETWORK is off: s3rver on 127.0.0.1 is reached as
 * s3.test.amazonaws.com (virtual-host style, the one host the rule is narrowed to let through), and
 * private.test, resolving to 127.0.0.1, is refused. Variants are off (edge_cache_only) so the stored
 * objects change only by what the flows do.
 */
const BASE = '/api/v1/automate'
const S3_HOST = 's3.test.amazonaws.com'

let server: TestServer
let store: TestS3Store
let owner: Account
let alice: Account
let bob: Account
/** While set, storage refuses to store objects of files (the row must not change when it does). */
let failFilePuts = false

const as =
  (token: string): Call =>
  (method, path, body) =>
    server.request(method, path, { token, body })
const flowOf = (operations: unknown[]) => activeFlow(as(owner.token), 'Files', operations)

/** Runs the flow as `as` (the run acts for the triggering user) and answers the finished run. */
const runAs = (account: Account, flowId: string, body: Record<string, unknown> = {}) =>
  executeToEnd(as(account.token), as(owner.token), flowId, body)
const step = (run: any, key: string) => run.stepLogs.find((s: any) => s.key === key)

/** A proxy upload as `as`. */
async function upload(as: Account, filename: string, type: string, bytes: Buffer, visibility = 'public'): Promise<any> {
  const form = new FormData()
  form.set('visibility', visibility)
  form.set('file', new Blob([bytes], { type }), filename)
  const res = await fetch(`${server.url}/api/v1/files/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${as.token}` },
    body: form,
  })
  const body = (await res.json()) as any
  expect(res.status, JSON.stringify(body)).toBe(201)
  return body.data
}

/** A file's bytes as `as` downloads them. */
async function download(as: Account, id: string): Promise<Buffer> {
  const token = await server.request('GET', `/api/v1/files/download-token/${id}`, { token: as.token })
  expect(token.status, token.text).toBe(200)
  const res = await fetch(token.body.data?.downloadUrl ?? token.body.downloadUrl)
  expect(res.status).toBe(200)
  return Buffer.from(await res.arrayBuffer())
}

/** What is stored: every file row (as the owner, who sees all) and every object under projects/. */
async function snapshot(): Promise<{ total: number; ids: string[]; objects: string[] }> {
  const reply = await server.request('GET', '/api/v1/files?limit=100', { token: owner.token })
  expect(reply.status, reply.text).toBe(200)
  expect(reply.body.hasMore).toBe(false)
  const objects = await server.app.storage.list('projects/', 1000)
  expect(objects.length).toBeLessThan(1000)
  return { total: reply.body.total, ids: reply.body.data.map((f: any) => f.id).sort(), objects: [...objects].sort() }
}

const image = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 10, g: 120, b: 200 } } })

beforeAll(async () => {
  store = await startS3Store('flows')
  const resolve = tableResolver({ [`flows.${S3_HOST}`]: ['127.0.0.1'], 'private.test': ['127.0.0.1'] })
  const faulty = (storage: ObjectStorage): ObjectStorage =>
    Object.assign(Object.create(storage) as ObjectStorage, {
      kind: storage.kind,
      async put(key: string, ...rest: unknown[]) {
        if (failFilePuts && key.includes('/files/')) throw new Error('storage unavailable')
        return (storage.put as (...args: unknown[]) => Promise<unknown>)(key, ...rest)
      },
    })
  server = await startServer(
    {},
    {
      filesStorage: faulty,
      outbound: { resolve, isBlocked: (address, host) => !host.endsWith(`.${S3_HOST}`) && isBlockedAddress(address) },
    },
  )
  owner = await signUpOwner(server)
  alice = await createAccount(server, owner.token, { role: 'editor' })
  bob = await createAccount(server, owner.token, { role: 'editor' })
  const settings = await server.request('PATCH', '/api/v1/settings', {
    token: owner.token,
    body: { 'files.strategy': 'edge_cache_only' },
  })
  expect(settings.status, settings.text).toBe(200)
})
afterAll(async () => {
  await server?.stop()
  await store?.stop()
})

describe('a flow uploads, reads and transforms files as its user', () => {
  it("file_upload stores text and base64 content as the run's user; file_read reads it back as json; file_transform writes a resized webp", async () => {
    const png = await image(300, 150).png().toBuffer()
    const flowId = await flowOf([
      {
        key: 'doc',
        type: 'file_upload',
        config: {
          key: 'reports/{{$trigger.body.day}}.json',
          content: '{"day":"{{$trigger.body.day}}","n":3}',
          contentType: 'application/json',
          metadata: { visibility: 'private' },
        },
      },
      { key: 'back', type: 'file_read', config: { key: '{{$steps.doc.id}}', encoding: 'json' } },
      { key: 'byKey', type: 'file_read', config: { key: '{{$steps.doc.key}}' } },
      {
        key: 'pic',
        type: 'file_upload',
        config: { key: 'banner.png', content: '{{$trigger.body.png}}', encoding: 'base64', contentType: 'image/png' },
      },
      {
        key: 'small',
        type: 'file_transform',
        config: {
          sourceKey: '{{$steps.pic.id}}',
          operations: [
            { type: 'resize', width: 100, height: 100 },
            { type: 'format', format: 'webp' },
            { type: 'quality', quality: 60 },
          ],
        },
      },
      {
        key: 'same',
        type: 'file_transform',
        config: {
          sourceKey: '{{$steps.pic.key}}',
          destKey: 'banner-small.jpg',
          operations: [
            { type: 'resize', width: 600, fit: 'scale-down' },
            { type: 'format', format: 'jpeg' },
          ],
        },
      },
    ])
    const run = await runAs(alice, flowId, { day: '2026-11-26', png: png.toString('base64') })
    expect(run.status, JSON.stringify(run.error)).toBe('completed')

    const doc = step(run, 'doc').output
    expect(doc).toMatchObject({
      filename: '2026-11-26.json',
      contentType: 'application/json',
      visibility: 'private',
      replaced: false,
      collectionName: '__system',
    })
    expect(step(run, 'back').output).toMatchObject({
      id: doc.id,
      encoding: 'json',
      content: { day: '2026-11-26', n: 3 },
    })
    expect(step(run, 'byKey').output).toMatchObject({ id: doc.id, content: '{"day":"2026-11-26","n":3}' })
    // Stored as the run's user, as GET /files/:id shows: alice's private file, which bob does not see.
    const meta = await server.request('GET', `/api/v1/files/${doc.id}`, { token: alice.token })
    expect(meta.body.data).toMatchObject({
      uploadedBy: alice.id,
      visibility: 'private',
      status: 'complete',
      sha256: createHash('sha256').update('{"day":"2026-11-26","n":3}').digest('hex'),
    })
    expect((await server.request('GET', `/api/v1/files/${doc.id}`, { token: bob.token })).status).toBe(404)

    const pic = step(run, 'pic').output
    expect(await download(alice, pic.id)).toEqual(png)
    const small = step(run, 'small').output
    expect(small).toMatchObject({
      filename: 'banner-transformed.webp',
      contentType: 'image/webp',
      width: 100,
      height: 50,
      format: 'webp',
      sourceId: pic.id,
      replaced: false,
    })
    expect(await sharp(await download(alice, small.id)).metadata()).toMatchObject({
      format: 'webp',
      width: 100,
      height: 50,
    })
    const same = step(run, 'same').output
    expect(same).toMatchObject({ filename: 'banner-small.jpg', width: 300, height: 150, format: 'jpeg' })
    expect(await sharp(await download(alice, same.id)).metadata()).toMatchObject({
      format: 'jpeg',
      width: 300,
      height: 150,
    })
  })

  it("file_upload to a file's own id replaces its bytes (the user's own file, within the editor's item_filter)", async () => {
    const mine = await upload(alice, 'mine.txt', 'text/plain', Buffer.from('old'))
    const flowId = await flowOf([
      {
        key: 'put',
        type: 'file_upload',
        config: { key: '{{$trigger.body.id}}', content: 'new bytes', contentType: 'text/plain' },
      },
    ])
    const run = await runAs(alice, flowId, { id: mine.id })
    expect(run.status, JSON.stringify(run.error)).toBe('completed')
    expect(step(run, 'put').output).toMatchObject({ id: mine.id, replaced: true, sizeBytes: 9, filename: 'mine.txt' })
    expect((await download(alice, mine.id)).toString()).toBe('new bytes')
  })

  it('file_read of JSON that does not parse fails the step with invalid_json', async () => {
    const broken = await upload(alice, 'broken.json', 'application/json', Buffer.from('{"n":'))
    const flowId = await flowOf([
      { key: 'read', type: 'file_read', config: { key: '{{$trigger.body.id}}', encoding: 'json' } },
    ])
    const run = await runAs(alice, flowId, { id: broken.id })
    expect(run.status).toBe('failed')
    expect(run.error).toMatchObject({ code: 'invalid_json', step: 'read' })
  })
})

describe('flow keys: a relative path names one file, R2-like (decision 040)', () => {
  /** Every file row holding `flowKey`, as the owner (who sees all) lists them. */
  async function atKey(flowKey: string): Promise<any[]> {
    const reply = await server.request('GET', '/api/v1/files?limit=100', { token: owner.token })
    expect(reply.status, reply.text).toBe(200)
    return reply.body.data.filter((f: any) => f.flowKey === flowKey)
  }

  it('file_upload at a key, then file_read at the same key, round-trips, in one run and in the next', async () => {
    const flowId = await flowOf([
      {
        key: 'put',
        type: 'file_upload',
        config: {
          key: 'exports/{{$trigger.body.day}}/summary.json',
          content: '{{$trigger.body.text}}',
          contentType: 'application/json',
        },
      },
      {
        key: 'get',
        type: 'file_read',
        config: { key: 'exports/{{$trigger.body.day}}/summary.json', encoding: 'json' },
      },
    ])
    const run = await runAs(alice, flowId, { day: '2026-11-27', text: '{"total":12}' })
    expect(run.status, JSON.stringify(run.error)).toBe('completed')
    const put = step(run, 'put').output
    expect(put).toMatchObject({ filename: 'summary.json', replaced: false, visibility: 'public' })
    expect(step(run, 'get').output).toMatchObject({ id: put.id, content: { total: 12 } })
    // Stored at the file's own id-based key; the flow key is on the File object.
    expect(put.key).toMatch(new RegExp(`^projects/${server.app.defaultProject.id}/files/${put.id}/`))
    const meta = await server.request('GET', `/api/v1/files/${put.id}`, { token: alice.token })
    expect(meta.body.data).toMatchObject({ flowKey: 'exports/2026-11-27/summary.json', uploadedBy: alice.id })

    const reader = await flowOf([{ key: 'get', type: 'file_read', config: { key: 'exports/2026-11-27/summary.json' } }])
    const later = await runAs(bob, reader)
    expect(later.status, JSON.stringify(later.error)).toBe('completed')
    expect(step(later, 'get').output).toMatchObject({ id: put.id, content: '{"total":12}' })
  })

  it('uploading twice at a key leaves one file, the same id, with the new content; the old object is gone', async () => {
    const flowId = await flowOf([
      {
        key: 'put',
        type: 'file_upload',
        config: { key: 'state/counter.txt', content: '{{$trigger.body.text}}', contentType: 'text/plain' },
      },
    ])
    const first = await runAs(alice, flowId, { text: 'one' })
    expect(first.status, JSON.stringify(first.error)).toBe('completed')
    const made = step(first, 'put').output
    const second = await runAs(alice, flowId, { text: 'two, longer' })
    expect(second.status, JSON.stringify(second.error)).toBe('completed')
    expect(step(second, 'put').output).toMatchObject({ id: made.id, replaced: true, sizeBytes: 11 })
    expect((await atKey('state/counter.txt')).map((f) => [f.id, f.sizeBytes])).toEqual([[made.id, 11]])
    expect((await download(alice, made.id)).toString()).toBe('two, longer')
    expect(
      await server.app.storage.list(`projects/${server.app.defaultProject.id}/files/${made.id}/`, 10),
    ).toHaveLength(1)
  })

  it("another user's file at a key is neither overwritten (forbidden, bytes unchanged) nor read when private (not_found)", async () => {
    const bobWrites = await flowOf([
      {
        key: 'secret',
        type: 'file_upload',
        config: {
          key: 'bob/diary.txt',
          content: 'bob only',
          contentType: 'text/plain',
          metadata: { visibility: 'private' },
        },
      },
      {
        key: 'open',
        type: 'file_upload',
        config: { key: 'bob/notice.txt', content: 'hello all', contentType: 'text/plain' },
      },
    ])
    const made = await runAs(bob, bobWrites)
    expect(made.status, JSON.stringify(made.error)).toBe('completed')
    const diary = step(made, 'secret').output
    const notice = step(made, 'open').output
    const before = await snapshot()
    for (const [flowKey, code] of [
      ['bob/diary.txt', 'forbidden'],
      ['bob/notice.txt', 'forbidden'],
    ] as const) {
      const overwrite = await flowOf([
        {
          key: 'attack',
          type: 'file_upload',
          config: { key: flowKey, content: 'alice was here', contentType: 'text/plain' },
        },
      ])
      const run = await runAs(alice, overwrite)
      expect(run.status, flowKey).toBe('failed')
      expect(run.error, flowKey).toMatchObject({ code, step: 'attack' })
    }
    // A transform into the key is refused alike.
    const png = await upload(alice, 'mine.png', 'image/png', await image(8, 8).png().toBuffer())
    const transform = await flowOf([
      {
        key: 'attack',
        type: 'file_transform',
        config: { sourceKey: png.id, destKey: 'bob/notice.txt', operations: [{ type: 'format', format: 'webp' }] },
      },
    ])
    expect((await runAs(alice, transform)).error).toMatchObject({ code: 'forbidden', step: 'attack' })
    const afterAttacks = await snapshot()
    expect(afterAttacks.ids).toEqual([...before.ids, png.id].sort())
    expect(afterAttacks.objects.length).toBe(before.objects.length + 1)
    expect((await download(bob, diary.id)).toString()).toBe('bob only')
    expect((await download(bob, notice.id)).toString()).toBe('hello all')

    const read = await flowOf([{ key: 'peek', type: 'file_read', config: { key: 'bob/diary.txt' } }])
    const peek = await runAs(alice, read)
    expect(peek.status).toBe('failed')
    expect(peek.error).toMatchObject({ code: 'not_found', step: 'peek' })
    expect(JSON.stringify(peek)).not.toContain('bob only')
    // Bob's public file at a key is readable, as GET /files/:id allows.
    const readPublic = await flowOf([{ key: 'get', type: 'file_read', config: { key: 'bob/notice.txt' } }])
    expect(step(await runAs(alice, readPublic), 'get').output).toMatchObject({ id: notice.id, content: 'hello all' })
  })

  it('a write at a key whose bytes cannot be stored, or that passes the quota, leaves the file there as it was', async () => {
    const flowId = await flowOf([
      {
        key: 'put',
        type: 'file_upload',
        config: { key: 'state/kept.txt', content: '{{$trigger.body.text}}', contentType: 'text/plain' },
      },
    ])
    const made = step(await runAs(alice, flowId, { text: 'kept bytes' }), 'put').output
    const before = (await server.request('GET', `/api/v1/files/${made.id}`, { token: alice.token })).body.data
    const objects = await server.app.storage.list(`projects/${server.app.defaultProject.id}/files/${made.id}/`, 10)
    failFilePuts = true
    try {
      const run = await runAs(alice, flowId, { text: 'new bytes that never land' })
      expect(run.status).toBe('failed')
    } finally {
      failFilePuts = false
    }
    const quota = await server.request('PATCH', '/api/v1/settings', {
      token: owner.token,
      body: { 'files.quotaBytes': 1 },
    })
    expect(quota.status, quota.text).toBe(200)
    try {
      const run = await runAs(alice, flowId, { text: 'over the quota' })
      expect(run.error).toMatchObject({ code: 'limit_exceeded', step: 'put' })
    } finally {
      const restored = await server.request('PATCH', '/api/v1/settings', {
        token: owner.token,
        body: { 'files.quotaBytes': 5 * 1024 ** 3 },
      })
      expect(restored.status, restored.text).toBe(200)
    }
    expect((await server.request('GET', `/api/v1/files/${made.id}`, { token: alice.token })).body.data).toEqual(before)
    expect((await download(alice, made.id)).toString()).toBe('kept bytes')
    expect(await server.app.storage.list(`projects/${server.app.defaultProject.id}/files/${made.id}/`, 10)).toEqual(
      objects,
    )
    expect((await atKey('state/kept.txt')).map((f) => f.id)).toEqual([made.id])
  })

  it('a private source is never transformed over a public file at a key (refused, the file unchanged)', async () => {
    const publish = await flowOf([
      {
        key: 'put',
        type: 'file_upload',
        config: { key: 'site/banner.webp', content: 'placeholder', contentType: 'image/webp' },
      },
    ])
    const placeholder = step(await runAs(alice, publish), 'put').output
    const secret = await upload(alice, 'secret.png', 'image/png', await image(8, 8).png().toBuffer(), 'private')
    const flowId = await flowOf([
      {
        key: 'shrink',
        type: 'file_transform',
        config: { sourceKey: secret.id, destKey: 'site/banner.webp', operations: [{ type: 'format', format: 'webp' }] },
      },
    ])
    const run = await runAs(alice, flowId)
    expect(run.status).toBe('failed')
    expect(run.error).toMatchObject({ code: 'invalid_request', step: 'shrink' })
    expect((await download(alice, placeholder.id)).toString()).toBe('placeholder')
  })

  it('two first writes racing at one key leave exactly one file', async () => {
    // In runs: both started at once.
    const flowId = await flowOf([
      {
        key: 'put',
        type: 'file_upload',
        config: { key: 'race/runs.txt', content: '{{$trigger.body.text}}', contentType: 'text/plain' },
      },
    ])
    const runs = await Promise.all(['first', 'second'].map((text) => runAs(alice, flowId, { text })))
    for (const run of runs) {
      if (run.status !== 'completed') expect(run.error).toMatchObject({ code: 'conflict' })
    }
    const files = await atKey('race/runs.txt')
    expect(files).toHaveLength(1)
    expect(['first', 'second']).toContain((await download(alice, files[0].id)).toString())

    // In the service itself, where the writes interleave for sure: several at once, one row, the others replacing it or 409.
    const project = server.app.defaultProject.id
    const principal = principals.user(
      {
        homeProjectId: project,
        userId: alice.id,
        roleId: await roleId(server, owner.token, 'editor'),
        roleName: 'editor',
        superAdmin: false,
      },
      { id: 'race', expiresAt: 4_000_000_000 },
    )
    const objectsBefore = (await snapshot()).objects
    const results = await Promise.allSettled(
      [1, 2, 3, 4].map((n) =>
        server.app.files.writeContent(principal, 'race/service.txt', {
          bytes: Buffer.from(`write ${n}`),
          mimeType: 'text/plain',
        }),
      ),
    )
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason).toMatchObject({ code: 'conflict' })
    }
    const written = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
    expect(written.filter((w) => !w.replaced)).toHaveLength(1)
    expect(new Set(written.map((w) => w.file.id)).size).toBe(1)
    const rows = await atKey('race/service.txt')
    expect(rows).toHaveLength(1)
    // One object more in all: the losers' objects were removed, the replaced ones too.
    const objectsAfter = (await snapshot()).objects
    expect(objectsAfter.filter((k) => !objectsBefore.includes(k))).toEqual(
      await server.app.storage.list(`projects/${project}/files/${rows[0].id}/`, 10),
    )
    expect(objectsAfter).toHaveLength(objectsBefore.length + 1)
    expect(['write 1', 'write 2', 'write 3', 'write 4']).toContain((await download(alice, rows[0].id)).toString())
  })

  it('a key that is not a relative path is refused, for reads and writes, and nothing is stored', async () => {
    const before = await snapshot()
    for (const config of [
      { type: 'file_upload', config: { key: '../x', content: 'x' } },
      { type: 'file_upload', config: { key: 'a//b.txt', content: 'x' } },
      { type: 'file_read', config: { key: '../x' } },
      { type: 'file_transform', config: { sourceKey: '../x', operations: [{ type: 'format', format: 'png' }] } },
    ]) {
      const flowId = await flowOf([{ key: 'bad', ...config }])
      const run = await runAs(alice, flowId)
      expect(run.status).toBe('failed')
      expect(run.error, JSON.stringify(config)).toMatchObject({
        code: 'invalid_request',
        step: 'bad',
        message: expect.stringMatching(/^key: a file id, a file's r2Key, or a relative path/),
      })
    }
    expect(await snapshot()).toEqual(before)
  })
})

describe('a dry run', () => {
  it('POST /flows/:id/test runs file_read and writes nothing: file_upload, file_transform and s3_action are not run', async () => {
    const source = await upload(owner, 'dry.png', 'image/png', await image(20, 10).png().toBuffer())
    const created = await server.request('POST', `${BASE}/flows`, {
      token: owner.token,
      body: {
        name: 'Dry files',
        triggerType: 'manual',
        triggerConfig: {},
        operations: [
          { key: 'read', type: 'file_read', config: { key: source.id, encoding: 'base64' } },
          { key: 'up', type: 'file_upload', config: { key: 'dry.txt', content: 'x' } },
          {
            key: 'shrink',
            type: 'file_transform',
            config: { sourceKey: source.id, operations: [{ type: 'format', format: 'webp' }] },
          },
          { key: 's3', type: 's3_action', config: { connectionId: 'none', action: 'put', key: 'k', content: 'x' } },
        ],
      },
    })
    expect(created.status, created.text).toBe(201)
    const before = await snapshot()
    const reply = await server.request('POST', `${BASE}/flows/${created.body.data.id}/test`, {
      token: owner.token,
      body: {},
    })
    expect(reply.status, reply.text).toBe(200)
    const status = Object.fromEntries(
      reply.body.data.steps.map((s: { key: string; status: string }) => [s.key, s.status]),
    )
    expect(status.read).toBe('completed')
    expect([status.up, status.shrink, status.s3]).not.toContain('completed')
    expect(await snapshot()).toEqual(before)
  })
})

describe('a flow reaches no file its user could not reach over HTTP', () => {
  let bobsPrivate: any
  let bobsPublic: any
  let bobsBytes: Buffer

  beforeAll(async () => {
    bobsPrivate = await upload(bob, 'diary.txt', 'text/plain', Buffer.from('bob only'), 'private')
    bobsBytes = await image(20, 20).png().toBuffer()
    bobsPublic = await upload(bob, 'logo.png', 'image/png', bobsBytes)
  })

  it("over HTTP alice gets 404 for bob's private file and 403 replacing his public one: the baseline the flow must match", async () => {
    expect((await server.request('GET', `/api/v1/files/${bobsPrivate.id}`, { token: alice.token })).status).toBe(404)
    const form = new FormData()
    form.set('file', new Blob([Buffer.from('x')], { type: 'image/png' }), 'x.png')
    const res = await fetch(`${server.url}/api/v1/files/${bobsPublic.id}/replace`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}` },
      body: form,
    })
    expect(res.status).toBe(403)
  })

  it.each([
    [
      "file_read of bob's private file by id",
      () => ({ type: 'file_read', config: { key: bobsPrivate.id } }),
      'not_found',
    ],
    [
      "file_read of bob's private file by r2Key",
      () => ({ type: 'file_read', config: { key: bobsPrivate.r2Key } }),
      'not_found',
    ],
    [
      "file_transform of bob's private file",
      () => ({
        type: 'file_transform',
        config: { sourceKey: bobsPrivate.id, operations: [{ type: 'format', format: 'png' }] },
      }),
      'not_found',
    ],
    [
      "file_upload over bob's public file",
      () => ({ type: 'file_upload', config: { key: bobsPublic.id, content: 'overwritten', contentType: 'image/png' } }),
      'forbidden',
    ],
    [
      "file_upload over bob's public file by r2Key",
      () => ({ type: 'file_upload', config: { key: bobsPublic.r2Key, content: 'overwritten' } }),
      'forbidden',
    ],
    [
      "file_transform into bob's public file",
      () => ({
        type: 'file_transform',
        config: { sourceKey: bobsPublic.id, destKey: bobsPublic.id, operations: [{ type: 'format', format: 'webp' }] },
      }),
      'forbidden',
    ],
  ])('%s fails (%s) and changes nothing', async (_name, make, code) => {
    const before = await snapshot()
    const flowId = await flowOf([{ key: 'attack', ...make() }])
    const run = await runAs(alice, flowId)
    expect(run.status).toBe('failed')
    expect(run.error).toMatchObject({ code, step: 'attack' })
    expect(JSON.stringify(run)).not.toContain('bob only')
    expect(await snapshot()).toEqual(before)
    expect(await download(bob, bobsPublic.id)).toEqual(bobsBytes)
    expect(
      (await server.request('GET', `/api/v1/files/${bobsPublic.id}`, { token: bob.token })).body.data,
    ).toMatchObject({ sha256: bobsPublic.sha256, uploadedBy: bob.id })
  })

  it("the same flow run by the owner (admin access) reads bob's private file, as GET /files/:id lets it", async () => {
    const flowId = await flowOf([{ key: 'read', type: 'file_read', config: { key: bobsPrivate.id } }])
    const run = await runAs(owner, flowId)
    expect(run.status, JSON.stringify(run.error)).toBe('completed')
    expect(step(run, 'read').output).toMatchObject({ content: 'bob only' })
  })
})

describe('a file_transform that cannot be performed fails and writes nothing', () => {
  const sources: Record<string, any> = {}
  let flowId: string

  beforeAll(async () => {
    sources.png = await upload(alice, 'photo.png', 'image/png', await image(200, 100).png().toBuffer())
    sources.gif = await upload(alice, 'anim.gif', 'image/gif', await image(40, 20).gif().toBuffer())
    sources.tiff = await upload(alice, 'scan.tiff', 'image/tiff', await image(40, 20).tiff().toBuffer())
    sources.bmp = await upload(alice, 'old.bmp', 'image/bmp', writeBmp(await image(30, 10).raw().toBuffer(), 30, 10))
    sources.tall = await upload(alice, 'tall.png', 'image/png', await image(10, 200).png().toBuffer())
    sources.junk = await upload(alice, 'junk.png', 'image/png', randomBytes(64))
    // One flow; the source and the operations come from the trigger, so each case is refused when it runs.
    flowId = await flowOf([
      {
        key: 'shrink',
        type: 'file_transform',
        config: { sourceKey: '{{$trigger.body.source}}', operations: '{{$trigger.body.ops}}' },
      },
    ])
  })

  it.each([
    ['fit cover', 'png', [{ type: 'resize', width: 50, height: 50, fit: 'cover' }], 'unsupported_transform'],
    ['fit crop', 'png', [{ type: 'resize', width: 50, height: 50, fit: 'crop' }], 'unsupported_transform'],
    ['avif output', 'png', [{ type: 'format', format: 'avif' }], 'unsupported_format'],
    ['gif output', 'png', [{ type: 'format', format: 'gif' }], 'unsupported_format'],
    ['tiff output', 'png', [{ type: 'format', format: 'tiff' }], 'unsupported_format'],
    [
      'quality for png output',
      'png',
      [
        { type: 'format', format: 'png' },
        { type: 'quality', quality: 50 },
      ],
      'unsupported_transform',
    ],
    [
      'quality for jpeg output',
      'png',
      [
        { type: 'format', format: 'jpeg' },
        { type: 'quality', quality: 50 },
      ],
      'unsupported_transform',
    ],
    ['quality with a png source kept png', 'png', [{ type: 'quality', quality: 50 }], 'unsupported_transform'],
    ['a resize with neither width nor height', 'png', [{ type: 'resize' }], 'unsupported_transform'],
    ['a result over 8192 pixels a side', 'tall', [{ type: 'resize', width: 8192 }], 'unsupported_transform'],
    ['a gif source without a format', 'gif', [{ type: 'resize', width: 10 }], 'format_required'],
    ['a tiff source without a format', 'tiff', [{ type: 'resize', width: 10 }], 'format_required'],
    ['a bmp source without a format', 'bmp', [{ type: 'resize', width: 10 }], 'format_required'],
    ['a source that is not an image', 'junk', [{ type: 'format', format: 'png' }], 'unreadable_image'],
    ['an unknown operation', 'png', [{ type: 'rotate', angle: 90 }], 'invalid_config'],
  ])('%s: %s', async (_name, source, ops, code) => {
    const before = await snapshot()
    const run = await runAs(alice, flowId, { source: sources[source].id, ops })
    expect(run.status).toBe('failed')
    expect(run.error).toMatchObject({ code, step: 'shrink' })
    // No new file row, no new stored object.
    expect(await snapshot()).toEqual(before)
  })

  it('the same flow performs what it can: gif, tiff and bmp sources naming a format are written', async () => {
    for (const [source, width] of [
      ['gif', 40],
      ['tiff', 40],
      ['bmp', 30],
    ] as const) {
      const before = await snapshot()
      const run = await runAs(alice, flowId, { source: sources[source].id, ops: [{ type: 'format', format: 'png' }] })
      expect(run.status, JSON.stringify(run.error)).toBe('completed')
      const out = step(run, 'shrink').output
      expect(out).toMatchObject({ format: 'png', width, contentType: 'image/png' })
      const after = await snapshot()
      expect(after.ids).toEqual([...before.ids, out.id].sort())
      expect(after.total).toBe(before.total + 1)
      expect(after.objects.length).toBe(before.objects.length + 1)
    }
  })
})

describe('s3_action on a storage connection', () => {
  let good: string
  let inside: string

  beforeAll(async () => {
    const connection = (endpoint: string) => ({
      label: endpoint,
      provider: 'minio',
      endpoint,
      bucketName: 'flows',
      accessKeyId: store.credentials.accessKeyId,
      secretKey: store.credentials.secretAccessKey,
    })
    const port = new URL(store.endpoint).port
    const created = await server.request('POST', '/api/v1/storage-connections', {
      token: owner.token,
      body: connection(`http://${S3_HOST}:${port}`),
    })
    expect(created.status, created.text).toBe(201)
    good = created.body.data.id
    // Saved (a name, not a literal address), but it resolves to 127.0.0.1.
    const privately = await server.request('POST', '/api/v1/storage-connections', {
      token: owner.token,
      body: connection(`http://private.test:${port}`),
    })
    expect(privately.status, privately.text).toBe(201)
    inside = privately.body.data.id
    // The storage-connections module refuses a literal private endpoint when it is saved.
    const literal = await server.request('POST', '/api/v1/storage-connections', {
      token: owner.token,
      body: connection(`http://127.0.0.1:${port}`),
    })
    expect(literal.status).toBe(400)
  })

  it('put, head, get, list and delete reach the bucket; the secret appears in no run', async () => {
    const flowId = await flowOf([
      {
        key: 'put',
        type: 's3_action',
        config: {
          connectionId: '{{$trigger.body.c}}',
          action: 'put',
          key: 'exports/{{$run.id}}.json',
          content: '{"ok":true}',
          contentType: 'application/json',
        },
      },
      {
        key: 'head',
        type: 's3_action',
        config: { connectionId: '{{$trigger.body.c}}', action: 'head', key: '{{$steps.put.key}}' },
      },
      {
        key: 'get',
        type: 's3_action',
        config: { connectionId: '{{$trigger.body.c}}', action: 'get', key: '{{$steps.put.key}}', encoding: 'json' },
      },
      {
        key: 'list',
        type: 's3_action',
        config: { connectionId: '{{$trigger.body.c}}', action: 'list', prefix: 'exports/' },
      },
      {
        key: 'del',
        type: 's3_action',
        config: { connectionId: '{{$trigger.body.c}}', action: 'delete', key: '{{$steps.put.key}}' },
      },
      {
        key: 'gone',
        type: 's3_action',
        config: { connectionId: '{{$trigger.body.c}}', action: 'head', key: '{{$steps.put.key}}' },
      },
    ])
    const run = await runAs(owner, flowId, { c: good })
    expect(run.status, JSON.stringify(run.error)).toBe('completed')
    const key = step(run, 'put').output.key as string
    expect(key).toMatch(/^exports\/[0-9a-f]{32}\.json$/)
    expect(step(run, 'put').output).toMatchObject({ key, sizeBytes: 11 })
    expect(step(run, 'head').output).toMatchObject({
      key,
      exists: true,
      sizeBytes: 11,
      contentType: 'application/json',
    })
    expect(step(run, 'get').output).toMatchObject({ key, content: { ok: true }, encoding: 'json' })
    expect(step(run, 'list').output).toMatchObject({ count: 1, objects: [{ key, sizeBytes: 11 }] })
    expect(step(run, 'del').output).toEqual({ key, deleted: true })
    expect(step(run, 'gone').output).toMatchObject({ exists: false })
    expect(JSON.stringify(run)).not.toContain(store.credentials.secretAccessKey)
    expect(server.logs.join('\n')).not.toContain(store.credentials.secretAccessKey)
  })

  it('a connection resolving to a private address fails with blocked_address and nothing reaches the bucket', async () => {
    const list = await flowOf([
      { key: 'list', type: 's3_action', config: { connectionId: good, action: 'list', maxKeys: 1000 } },
    ])
    const count = async () => step(await runAs(owner, list), 'list').output.count as number
    const before = await count()
    const flowId = await flowOf([
      {
        key: 'put',
        type: 's3_action',
        config: { connectionId: inside, action: 'put', key: 'inside.txt', content: 'x' },
      },
    ])
    const run = await runAs(owner, flowId)
    expect(run.status).toBe('failed')
    expect(run.error).toMatchObject({ code: 'blocked_address', step: 'put' })
    expect(await count()).toBe(before)
  })

  it('a flow acting for an editor (no system/storage-connections grant) is refused', async () => {
    const flowId = await flowOf([{ key: 'list', type: 's3_action', config: { connectionId: good, action: 'list' } }])
    const run = await runAs(alice, flowId)
    expect(run.status).toBe('failed')
    expect(run.error).toMatchObject({ code: 'forbidden', step: 'list' })
  })
})

describe('with files kept in an S3-compatible store (S3_*)', () => {
  it('file_upload, file_read and file_transform work the same', async () => {
    const filesStore = await startS3Store('plinth-files')
    const other = await startServer(s3Settings(filesStore))
    try {
      const admin = await signUpOwner(other)
      const created = await other.request('POST', `${BASE}/flows`, {
        token: admin.token,
        body: {
          name: 'S3 files',
          triggerType: 'manual',
          triggerConfig: {},
          operations: [
            {
              key: 'pic',
              type: 'file_upload',
              config: {
                key: 'pic.png',
                content: '{{$trigger.body.png}}',
                encoding: 'base64',
                contentType: 'image/png',
              },
            },
            { key: 'read', type: 'file_read', config: { key: '{{$steps.pic.id}}', encoding: 'base64' } },
            {
              key: 'small',
              type: 'file_transform',
              config: {
                sourceKey: '{{$steps.pic.key}}',
                operations: [
                  { type: 'resize', width: 16 },
                  { type: 'format', format: 'webp' },
                ],
              },
            },
          ],
        },
      })
      expect(created.status, created.text).toBe(201)
      const id = created.body.data.id
      expect(
        (
          await other.request('POST', `${BASE}/flows/${id}/publish`, {
            token: admin.token,
            body: { changeSummary: 't' },
          })
        ).status,
      ).toBe(200)
      expect(
        (await other.request('PATCH', `${BASE}/flows/${id}/status`, { token: admin.token, body: { status: 'active' } }))
          .status,
      ).toBe(200)
      const png = await image(32, 32).png().toBuffer()
      const started = await other.request('POST', `${BASE}/flows/${id}/execute`, {
        token: admin.token,
        body: { png: png.toString('base64') },
      })
      expect(started.status, started.text).toBe(202)
      let run: any
      for (const deadline = Date.now() + 30_000; ; ) {
        run = (await other.request('GET', `${BASE}/runs/${started.body.data.runId}`, { token: admin.token })).body.data
        if (run && !['pending', 'running'].includes(run.status)) break
        if (Date.now() > deadline) throw new Error('run did not end')
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(run.status, JSON.stringify(run.error)).toBe('completed')
      expect(step(run, 'read').output.content).toBe(png.toString('base64'))
      expect(step(run, 'small').output).toMatchObject({ width: 16, height: 16, format: 'webp' })
    } finally {
      await other.stop()
      await filesStore.stop()
    }
  })
})
