import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Reply } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import {
  bucketKeys,
  connection,
  container,
  startStorageWorld,
  storeRequest,
  uploadInto,
  type StorageWorld,
} from './containers-storage-support.js'
import { FILES, image, metadata, pollFile, sha256, someBytes } from './files-support.js'

/**
 * Files in a container on a storage connection (issue 29 item 5, decision 067), over real HTTP against
 * s3rver: the original and its variants land in the connection's bucket (or the container's own) under the
 * container's prefix, never in the instance's storage; downloads, token uploads, replace, regenerate and
 * delete follow the file; the file keeps its place when the container changes; its bytes stay outside the
 * project quota; a connection holding files is not deleted; the secret key appears in no answer and no log.
 */
let world: StorageWorld
let owner: Account
let editor: Account
let connectionId: string
let jpeg: Buffer
const replies: Reply[] = []

function kept(reply: Reply): Reply {
  replies.push(reply)
  return reply
}

async function downloadUrl(token: string, id: string, size?: string): Promise<string> {
  const reply = kept(
    await world.server.request('GET', `${FILES}/download-token/${id}${size ? `?size=${size}` : ''}`, { token }),
  )
  expect(reply.status, reply.text).toBe(200)
  return reply.body.downloadUrl
}

beforeAll(async () => {
  world = await startStorageWorld()
  owner = await signUpOwner(world.server)
  editor = await createAccount(world.server, owner.token, { role: 'editor' })
  connectionId = await connection(world, owner.token)
  jpeg = await image('jpeg', 640, 480)
})
afterAll(async () => {
  await world?.stop()
})

describe('a proxy upload into a container on a storage connection', () => {
  it("stores the original and its variants in the connection's bucket under the prefix; downloads come from there", async () => {
    const box = await container(world, owner.token, {
      storageConnectionId: connectionId,
      prefix: 'people/avatars',
      imageSizes: [{ name: 'tiny', size: 64 }],
    })
    const reply = kept(
      await uploadInto(world, editor.token, box.id, { bytes: jpeg, type: 'image/jpeg', filename: 'me.jpg' }),
    )
    expect(reply.status, reply.text).toBe(201)
    const file = reply.body.data
    const project = file.projectId
    expect(file.r2Key).toBe(`projects/${project}/files/people/avatars/${file.id}/me.jpg`)
    const done = await pollFile(world.server, editor.token, file.id, (f) => f.variantStatus !== 'pending')
    expect(done.variantStatus).toBe('ready')
    expect(Object.keys(done.variants).sort()).toEqual(['thumbnail', 'tiny'])
    expect(await bucketKeys(world, 'box', `projects/${project}/files/people/avatars/${file.id}/`)).toEqual([file.r2Key])
    const variantKeys = await bucketKeys(world, 'box', `projects/${project}/variants/people/avatars/${file.id}/`)
    expect(variantKeys).toEqual([done.variants.thumbnail.r2Key, done.variants.tiny.r2Key].sort())
    expect(await world.server.app.storage.list(`projects/${project}/`, 1000)).not.toContain(file.r2Key)

    const url = await downloadUrl(editor.token, file.id)
    expect(new URL(url).hostname).toBe(`box.${new URL(world.endpoint).hostname}`)
    const original = await storeRequest(url)
    expect(original.status).toBe(200)
    expect(sha256(original.bytes)).toBe(file.sha256)
    const thumb = await storeRequest(await downloadUrl(editor.token, file.id, 'thumbnail'))
    expect(thumb.status).toBe(200)
    expect(thumb.bytes.length).toBe(done.variants.thumbnail.sizeBytes)
  })

  it("a container's own bucket is used, and a file keeps its bucket and prefix when the container changes", async () => {
    const box = await container(world, owner.token, {
      storageConnectionId: connectionId,
      bucketName: 'other',
      prefix: 'first',
    })
    const bytes = someBytes(3000)
    const reply = kept(
      await uploadInto(world, editor.token, box.id, { bytes, type: 'application/pdf', filename: 'a.pdf' }),
    )
    expect(reply.status, reply.text).toBe(201)
    const file = reply.body.data
    expect(await bucketKeys(world, 'other', file.r2Key)).toEqual([file.r2Key])
    expect(await bucketKeys(world, 'box', file.r2Key)).toEqual([])
    const changed = await world.server.request('PATCH', `/api/v1/containers/${box.id}`, {
      token: owner.token,
      body: { bucketName: null, prefix: 'second' },
    })
    expect(changed.status, changed.text).toBe(200)
    const again = await storeRequest(await downloadUrl(editor.token, file.id))
    expect(again.status).toBe(200)
    expect(again.bytes.equals(bytes)).toBe(true)
    const next = kept(
      await uploadInto(world, editor.token, box.id, { bytes, type: 'application/pdf', filename: 'b.pdf' }),
    )
    expect(next.body.data.r2Key).toContain('/files/second/')
    expect(await bucketKeys(world, 'box', next.body.data.r2Key)).toEqual([next.body.data.r2Key])
  })

  it('replace, regenerate and delete work on the bytes where they live', async () => {
    const box = await container(world, owner.token, {
      storageConnectionId: connectionId,
      prefix: 'gallery',
      allowedTypes: ['image/*'],
      imageSizes: [{ name: 'wide', size: 100 }],
    })
    const first = kept(
      await uploadInto(world, editor.token, box.id, { bytes: jpeg, type: 'image/jpeg', filename: 'p.jpg' }),
    )
    expect(first.status, first.text).toBe(201)
    const id = first.body.data.id
    const project = first.body.data.projectId
    await pollFile(world.server, editor.token, id, (f) => f.variantStatus !== 'pending')
    const png = await image('png', 300, 200)
    const replace = (bytes: Uint8Array, type: string) => fetchReplace(id, bytes, type)
    // The container's types bind a replacement too.
    const refused = await replace(someBytes(10), 'text/plain')
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({ error: 'invalid_request', details: { field: 'file' } })
    const replaced = await replace(png, 'image/png')
    expect(replaced.status, replaced.text).toBe(200)
    const after = replaced.body.data
    expect(after.r2Key).toMatch(new RegExp(`^projects/${project}/files/gallery/${id}/[^/]+/p\\.jpg$`))
    expect(await bucketKeys(world, 'box', `projects/${project}/files/gallery/${id}/`)).toEqual([after.r2Key])
    const ready = await pollFile(world.server, editor.token, id, (f) => f.variantStatus !== 'pending')
    expect(ready.variantStatus).toBe('ready')
    const regenerated = await world.server.request('POST', `${FILES}/${id}/regenerate`, { token: editor.token })
    expect(regenerated.status, regenerated.text).toBe(200)
    expect(regenerated.body.data.status).toBe('regenerated')
    expect(await bucketKeys(world, 'box', `projects/${project}/variants/gallery/${id}/`)).toHaveLength(2)

    const deleted = await world.server.request('DELETE', `${FILES}/${id}`, { token: editor.token })
    expect(deleted.status, deleted.text).toBe(200)
    expect(await bucketKeys(world, 'box', `projects/${project}/files/gallery/${id}/`)).toEqual([])
    expect(await bucketKeys(world, 'box', `projects/${project}/variants/gallery/${id}/`)).toEqual([])
  })
})

async function fetchReplace(id: string, bytes: Uint8Array, type: string): Promise<Reply> {
  const data = new FormData()
  data.append('file', new Blob([bytes], { type }), 'r.bin')
  const res = await fetch(`${world.server.url}${FILES}/${id}/replace`, {
    method: 'POST',
    headers: { authorization: `Bearer ${editor.token}` },
    body: data,
  })
  const text = await res.text()
  return kept({ status: res.status, headers: res.headers, text, body: JSON.parse(text) })
}

describe('a token upload into a container on a storage connection', () => {
  it("the upload URL is the bucket's own; confirm copies and measures there", async () => {
    const box = await container(world, owner.token, { storageConnectionId: connectionId, prefix: 'scans' })
    const bytes = someBytes(5000)
    const reserved = kept(
      await world.server.request('POST', `${FILES}/upload-token`, {
        token: editor.token,
        body: {
          filename: 's.bin',
          mime_type: 'application/octet-stream',
          size_bytes: bytes.length,
          container_id: box.id,
        },
      }),
    )
    expect(reserved.status, reserved.text).toBe(200)
    expect(new URL(reserved.body.uploadUrl).hostname).toBe(`box.${new URL(world.endpoint).hostname}`)
    const put = await storeRequest(reserved.body.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: bytes,
    })
    expect(put.status, put.bytes.toString()).toBe(200)
    const confirmed = kept(
      await world.server.request('POST', `${FILES}/confirm-upload/${reserved.body.id}`, { token: editor.token }),
    )
    expect(confirmed.status, confirmed.text).toBe(200)
    const file = await metadata(world.server, editor.token, reserved.body.id)
    expect(file).toMatchObject({ status: 'complete', sizeBytes: 5000, sha256: sha256(bytes) })
    expect(file.r2Key).toContain(`/files/scans/${file.id}/`)
    expect(await bucketKeys(world, 'box', file.r2Key)).toEqual([file.r2Key])
    const back = await storeRequest(await downloadUrl(editor.token, file.id))
    expect(back.bytes.equals(bytes)).toBe(true)
  })
})

describe('the cleanup sweep follows the file', () => {
  /** Makes a file look `seconds` older, as the sweep reads it. */
  async function age(id: string, seconds: number): Promise<void> {
    const db = world.server.app.registry.system.db
    const row = await db.selectFrom('files').select('created_at').where('id', '=', id).executeTakeFirstOrThrow()
    await db
      .updateTable('files')
      .set({ created_at: Number(row.created_at) - seconds })
      .where('id', '=', id)
      .execute()
  }

  async function reserve(box: any, bytes: Buffer): Promise<string> {
    const reserved = kept(
      await world.server.request('POST', `${FILES}/upload-token`, {
        token: editor.token,
        body: {
          filename: 'w.bin',
          mime_type: 'application/octet-stream',
          size_bytes: bytes.length,
          container_id: box.id,
        },
      }),
    )
    expect(reserved.status, reserved.text).toBe(200)
    const put = await storeRequest(reserved.body.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: bytes,
    })
    expect(put.status).toBe(200)
    return reserved.body.id
  }

  it("removes a dead upload URL's key and an abandoned upload from the connection's bucket", async () => {
    const box = await container(world, owner.token, { storageConnectionId: connectionId, prefix: 'swept' })
    const confirmedId = await reserve(box, someBytes(100))
    expect(
      (await world.server.request('POST', `${FILES}/confirm-upload/${confirmedId}`, { token: editor.token })).status,
    ).toBe(200)
    const abandonedId = await reserve(box, someBytes(100))
    const project = (await metadata(world.server, editor.token, confirmedId)).projectId
    expect(await bucketKeys(world, 'box', `projects/${project}/uploads/${confirmedId}/`)).toHaveLength(1)
    expect(await bucketKeys(world, 'box', `projects/${project}/uploads/${abandonedId}/`)).toHaveLength(1)
    await age(confirmedId, 20 * 60)
    await age(abandonedId, 2 * 3600)
    await world.server.app.files.sweep()
    expect(await bucketKeys(world, 'box', `projects/${project}/uploads/${confirmedId}/`)).toEqual([])
    expect(await bucketKeys(world, 'box', `projects/${project}/uploads/${abandonedId}/`)).toEqual([])
    const served = await metadata(world.server, editor.token, confirmedId)
    expect(await bucketKeys(world, 'box', served.r2Key)).toEqual([served.r2Key])
    const gone = await world.server.request('GET', `${FILES}/${abandonedId}`, { token: editor.token })
    expect(gone.status).toBe(404)
  })
})

describe('the quota and the connection', () => {
  it("bytes on a connection stay outside the project quota; the instance's storage is still held to it", async () => {
    const project = await world.server.request('POST', '/api/v1/projects', {
      token: owner.token,
      body: { name: 'Quota on a connection' },
    })
    expect(project.status, project.text).toBe(201)
    const inQ = { 'X-Project-Id': project.body.data.id as string }
    const settings = await world.server.request('PATCH', '/api/v1/settings', {
      token: owner.token,
      headers: inQ,
      body: { 'files.quotaBytes': 1000 },
    })
    expect(settings.status, settings.text).toBe(200)
    const q = await connection(world, owner.token, {}, inQ)
    const onConnection = await container(world, owner.token, { storageConnectionId: q }, inQ)
    const onInstance = await container(world, owner.token, {}, inQ)
    const send = (id: string) =>
      fetch(`${world.server.url}${FILES}/upload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}`, ...inQ },
        body: (() => {
          const data = new FormData()
          data.append('container_id', id)
          data.append('file', new Blob([someBytes(4000)], { type: 'application/octet-stream' }), 'q.bin')
          return data
        })(),
      })
    expect((await send(onConnection.id)).status).toBe(201)
    expect((await send(onConnection.id)).status).toBe(201)
    const over = await send(onInstance.id)
    expect(over.status).toBe(400)
    expect(((await over.json()) as { error: string }).error).toBe('limit_exceeded')
  })

  it('a connection files keep their bytes on is not deleted (409 with the count); one without files goes', async () => {
    const used = await connection(world, owner.token)
    const box = await container(world, owner.token, { storageConnectionId: used })
    const reply = kept(
      await uploadInto(world, editor.token, box.id, { bytes: someBytes(10), type: 'text/plain', filename: 'x.txt' }),
    )
    expect(reply.status, reply.text).toBe(201)
    const refused = await world.server.request('DELETE', `/api/v1/storage-connections/${used}`, { token: owner.token })
    expect(refused.status, refused.text).toBe(409)
    expect(refused.body).toMatchObject({ error: 'conflict', details: { files: 1 } })
    const idle = await connection(world, owner.token)
    expect(
      (await world.server.request('DELETE', `/api/v1/storage-connections/${idle}`, { token: owner.token })).status,
    ).toBe(204)
  })
})

describe('secrets', () => {
  it("the connection's secret key appears in no answer above, no log line and no audit entry", async () => {
    const audit = await world.server.request('GET', '/api/v1/audit-log?limit=100', { token: owner.token })
    expect(audit.status, audit.text).toBe(200)
    const secret = world.store.credentials.secretAccessKey
    expect(replies.length).toBeGreaterThan(5)
    for (const reply of [...replies, audit]) expect(reply.text).not.toContain(secret)
    expect(world.server.logs.join('\n')).not.toContain(secret)
  })
})
