import { pipeline, Transform, type Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ObjectStorage } from '../../src/lib/storage/index.js'
import type { Reply } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import {
  bucketKeys,
  connection,
  container,
  EVIL_HOST,
  startStorageWorld,
  streamedInto,
  uploadInto,
  type StorageWorld,
} from './containers-storage-support.js'
import { FILES, someBytes } from './files-support.js'

/**
 * Containers on storage connections attacked over HTTP (decision 067). Each guard has a test that fails
 * without it:
 * - a container pointing at another project's connection (saved before, or written behind the API) stores
 *   nothing there: the connection is looked up in the uploader's project;
 * - a connection whose endpoint resolves to a private address is refused by the outbound rule (403
 *   blocked_address), for the proxy upload and the upload token, before any row or byte exists;
 * - a file on a connection of project A is not found from project B;
 * - a container whose connection was deleted, or a bucket that does not exist, is a clear 4xx/503 with
 *   nothing half-written, and no answer or log carries the secret key;
 * - a container's maxFileBytes stops a streamed body early: storage never reads much past it.
 */
let world: StorageWorld
let owner: Account
let editor: Account
let projectA: string
let projectB: string
let streamed = 0

/** Counts the bytes the instance's storage reads from streamed uploads. */
function counting(storage: ObjectStorage): ObjectStorage {
  return Object.assign(Object.create(storage) as ObjectStorage, {
    kind: storage.kind,
    exclusiveUploads: storage.exclusiveUploads,
    put(key: string, body: Buffer | Readable, options: { contentType: string; sizeBytes?: number }) {
      if (Buffer.isBuffer(body)) return storage.put(key, body, options)
      const meter = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          streamed += chunk.length
          done(null, chunk)
        },
      })
      // The body's failure reaches storage through the meter, as it would have reached it directly.
      pipeline(body, meter, () => {})
      return storage.put(key, meter, options)
    },
  })
}

/** Every file row of a project, whatever its status, read behind the API. */
async function rowsOf(projectId: string): Promise<string[]> {
  const rows = await world.server.app.registry.system.db
    .selectFrom('files')
    .select('id')
    .where('project_id', '=', projectId)
    .execute()
  return rows.map((r: { id: string }) => r.id)
}

function refused(reply: Reply, status: number, code: string): void {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.body).toMatchObject({ error: code })
  expect(reply.text).not.toContain(world.store.credentials.secretAccessKey)
}

beforeAll(async () => {
  world = await startStorageWorld({ filesStorage: counting })
  owner = await signUpOwner(world.server)
  editor = await createAccount(world.server, owner.token, { role: 'editor' })
  const me = await world.server.request('GET', '/api/v1/projects', { token: owner.token })
  expect(me.status, me.text).toBe(200)
  const b = await world.server.request('POST', '/api/v1/projects', { token: owner.token, body: { name: 'Project B' } })
  expect(b.status, b.text).toBe(201)
  projectB = b.body.data.id
  projectA = (me.body.data as { id: string }[]).find((p) => p.id !== projectB)!.id
})
afterAll(async () => {
  await world?.stop()
})

describe("another project's connection", () => {
  it('a container naming it is refused when saved (422)', async () => {
    const theirs = await connection(world, owner.token, { bucketName: 'other' }, { 'X-Project-Id': projectB })
    const reply = await world.server.request('POST', '/api/v1/containers', {
      token: owner.token,
      body: { name: 'stolen', storageConnectionId: theirs },
    })
    refused(reply, 422, 'validation_error')
    expect(reply.body.details).toMatchObject({ at: 'storageConnectionId' })
  })

  it('a container pointing at it behind the API stores nothing there: 400 naming container_id, no row, no object', async () => {
    const theirs = await connection(world, owner.token, { bucketName: 'other' }, { 'X-Project-Id': projectB })
    const box = await container(world, owner.token, { prefix: 'stolen' })
    await world.server.app.registry.system.db
      .updateTable('file_containers')
      .set({ storage_connection_id: theirs })
      .where('id', '=', box.id)
      .execute()
    const before = await bucketKeys(world, 'other')
    const rows = await rowsOf(projectA)
    const proxy = await uploadInto(world, editor.token, box.id, {
      bytes: someBytes(50),
      type: 'text/plain',
      filename: 'x.txt',
    })
    refused(proxy, 400, 'invalid_request')
    expect(proxy.body.details).toMatchObject({ field: 'container_id' })
    const token = await world.server.request('POST', `${FILES}/upload-token`, {
      token: editor.token,
      body: { filename: 'x.txt', mime_type: 'text/plain', size_bytes: 50, container_id: box.id },
    })
    refused(token, 400, 'invalid_request')
    expect(await bucketKeys(world, 'other')).toEqual(before)
    expect(await rowsOf(projectA)).toEqual(rows)
  })

  it('a file on a connection of project A is not found from project B', async () => {
    const mine = await connection(world, owner.token)
    const box = await container(world, owner.token, { storageConnectionId: mine })
    const file = (
      await uploadInto(world, owner.token, box.id, { bytes: someBytes(20), type: 'text/plain', filename: 'a.txt' })
    ).body.data
    const inB = { token: owner.token, headers: { 'X-Project-Id': projectB } }
    refused(await world.server.request('GET', `${FILES}/download-token/${file.id}`, inB), 404, 'not_found')
    refused(await world.server.request('GET', `${FILES}/${file.id}`, inB), 404, 'not_found')
    refused(await world.server.request('DELETE', `${FILES}/${file.id}`, inB), 404, 'not_found')
    expect(await bucketKeys(world, 'box', file.r2Key)).toEqual([file.r2Key])
  })
})

describe('a connection the outbound rule refuses', () => {
  it('an endpoint resolving to a private address is 403 blocked_address for upload and token; nothing is written', async () => {
    const port = new URL(world.store.endpoint).port
    const evil = await connection(world, owner.token, { endpoint: `http://${EVIL_HOST}:${port}` })
    const box = await container(world, owner.token, { storageConnectionId: evil, prefix: 'evil' })
    const before = await bucketKeys(world, 'box')
    const rows = await rowsOf(projectA)
    const proxy = await uploadInto(world, editor.token, box.id, {
      bytes: someBytes(50),
      type: 'text/plain',
      filename: 'x.txt',
    })
    refused(proxy, 403, 'forbidden')
    expect(proxy.body.details).toMatchObject({ reason: 'blocked_address' })
    const token = await world.server.request('POST', `${FILES}/upload-token`, {
      token: editor.token,
      body: { filename: 'x.txt', mime_type: 'text/plain', size_bytes: 50, container_id: box.id },
    })
    refused(token, 403, 'forbidden')
    expect(await bucketKeys(world, 'box')).toEqual(before)
    expect(await rowsOf(projectA)).toEqual(rows)
  })
})

describe('a connection that is gone or broken', () => {
  it('a container whose connection was deleted is 400 naming container_id; nothing is written', async () => {
    const gone = await connection(world, owner.token)
    const box = await container(world, owner.token, { storageConnectionId: gone })
    const deleted = await world.server.request('DELETE', `/api/v1/storage-connections/${gone}`, { token: owner.token })
    expect(deleted.status, deleted.text).toBe(204)
    const rows = await rowsOf(projectA)
    const reply = await uploadInto(world, editor.token, box.id, {
      bytes: someBytes(50),
      type: 'text/plain',
      filename: 'x.txt',
    })
    refused(reply, 400, 'invalid_request')
    expect(reply.body.details).toMatchObject({ field: 'container_id' })
    expect(await rowsOf(projectA)).toEqual(rows)
  })

  it('a bucket that does not exist is 503 with the reason, no row, and the secret in no answer or log', async () => {
    const box = await container(world, owner.token, {
      storageConnectionId: await connection(world, owner.token),
      bucketName: 'no-such-bucket',
    })
    const rows = await rowsOf(projectA)
    const reply = await uploadInto(world, editor.token, box.id, {
      bytes: someBytes(50),
      type: 'text/plain',
      filename: 'x.txt',
    })
    refused(reply, 503, 'service_unavailable')
    expect(reply.body.details).toMatchObject({ reason: 'bucket_not_found' })
    const token = await world.server.request('POST', `${FILES}/upload-token`, {
      token: editor.token,
      body: { filename: 'x.txt', mime_type: 'text/plain', size_bytes: 50, container_id: box.id },
    })
    refused(token, 503, 'service_unavailable')
    expect(token.body.details).toMatchObject({ reason: 'bucket_not_found' })
    expect(await rowsOf(projectA)).toEqual(rows)
    expect(world.server.logs.join('\n')).not.toContain(world.store.credentials.secretAccessKey)
  })
})

describe("a container's maxFileBytes", () => {
  it('stops a streamed body early (400 limit_exceeded): storage reads little past the ceiling, and keeps nothing', async () => {
    const box = await container(world, owner.token, { maxFileBytes: 1000, prefix: 'small' })
    const rows = await rowsOf(projectA)
    streamed = 0
    const reply = await streamedInto(world.server, editor.token, box.id, 8 * 1024 * 1024)
    refused(reply, 400, 'limit_exceeded')
    expect(reply.body.details, reply.text).toMatchObject({ limit: 1000 })
    // Without the check while streaming, the whole 8 MiB reached storage before the size was refused.
    expect(streamed).toBeLessThan(1000 + 256 * 1024)
    expect(await world.server.app.storage.list(`projects/${projectA}/files/small/`, 10)).toEqual([])
    expect(await rowsOf(projectA)).toEqual(rows)
  })

  it('on a connection too: refused while streaming, nothing left in the bucket', async () => {
    const box = await container(world, owner.token, {
      storageConnectionId: await connection(world, owner.token),
      maxFileBytes: 1000,
      prefix: 'capped',
    })
    const reply = await streamedInto(world.server, editor.token, box.id, 12 * 1024 * 1024)
    refused(reply, 400, 'limit_exceeded')
    expect(await bucketKeys(world, 'box', `projects/${projectA}/files/capped/`)).toEqual([])
  })
})
