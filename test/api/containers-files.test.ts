import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { uniqueName } from './collections-support.js'
import { FILES, form, image, metadata, pollFile, postForm, someBytes } from './files-support.js'

/**
 * Uploads into file containers (issue 29 item 5, decision 066) over real HTTP: the container's types and
 * size refused with the files module's own codes, an accepted file under its prefix with its variants and
 * default visibility, another project's container refused, regenerate by container id, and a container in
 * use refused on delete (409 with the count).
 */
const BASE = '/api/v1/containers'
let server: TestServer
let owner: Account
let editor: Account
let jpeg: Buffer

async function container(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<any> {
  const reply = await server.request('POST', BASE, {
    token: owner.token,
    body: { name: uniqueName('box'), ...body },
    headers,
  })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data
}

/** The proxy upload naming a container (its field before the file, as a browser's FormData sends it in order). */
function upload(
  containerId: string,
  bytes: Uint8Array,
  type: string,
  filename: string,
  token = editor.token,
): Promise<Reply> {
  return postForm(server, `${FILES}/upload`, token, form({ container_id: containerId }, { filename, type, bytes }))
}

function refused(reply: Reply, status: number, code: string): void {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.body).toMatchObject({ error: code })
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  editor = await createAccount(server, owner.token, { role: 'editor' })
  jpeg = await image('jpeg', 800, 600)
})
afterAll(async () => {
  await server?.stop()
})

describe('uploads into a container', () => {
  it('a type the container does not accept is 400 invalid_request; nothing is stored', async () => {
    const box = await container({ allowedTypes: ['image/png', 'image/jpeg'] })
    refused(await upload(box.id, someBytes(100), 'text/plain', 'notes.txt'), 400, 'invalid_request')
    const listed = await server.request('GET', `${FILES}?limit=100`, { token: owner.token })
    expect(listed.body.data.map((f: any) => f.filename)).not.toContain('notes.txt')
  })

  it('a file larger than maxFileBytes is 400 limit_exceeded; one at the ceiling is accepted', async () => {
    const box = await container({ maxFileBytes: 1000 })
    const over = await upload(box.id, someBytes(1001), 'application/octet-stream', 'big.bin')
    refused(over, 400, 'limit_exceeded')
    expect(over.body.details).toMatchObject({ limit: 1000 })
    expect((await upload(box.id, someBytes(1000), 'application/octet-stream', 'fits.bin')).status).toBe(201)
  })

  it("lands under the container's prefix with its variants and default visibility", async () => {
    const box = await container({
      prefix: 'people/avatars',
      visibility: 'private',
      allowedTypes: ['image/*'],
      imageSizes: [{ name: 'tiny', size: 64 }],
    })
    const reply = await upload(box.id, jpeg, 'image/jpeg', 'face.jpg')
    expect(reply.status, reply.text).toBe(201)
    const file = reply.body.data
    expect(file.r2Key).toMatch(new RegExp(`^projects/[^/]+/files/people/avatars/${file.id}/face\\.jpg$`))
    expect(file.visibility).toBe('private')
    const done = await pollFile(
      server,
      editor.token,
      file.id,
      (f) => f.variantStatus === 'ready' || f.variantStatus === 'failed',
    )
    expect(done.variantStatus).toBe('ready')
    expect(Object.keys(done.variants).sort()).toEqual(['thumbnail', 'tiny'])
    expect(done.variants.tiny).toMatchObject({ width: 64, height: 48 })
  })

  it("another project's container, or none of that id, is 400 naming container_id", async () => {
    const project = await server.request('POST', '/api/v1/projects', {
      token: owner.token,
      body: { name: uniqueName('elsewhere') },
    })
    expect(project.status, project.text).toBe(201)
    const theirs = await container({ prefix: 'theirs' }, { 'X-Project-Id': project.body.data.id as string })
    for (const id of [theirs.id, 'nope']) {
      const reply = await upload(id, jpeg, 'image/jpeg', 'x.jpg', owner.token)
      refused(reply, 400, 'invalid_request')
      expect(reply.body.details).toMatchObject({ field: 'container_id' })
    }
  })

  it('a container_id sent after the file is refused, not ignored', async () => {
    const box = await container({ allowedTypes: ['image/png'] })
    const data = new FormData()
    data.append('file', new Blob([someBytes(10)], { type: 'text/plain' }), 'late.txt')
    data.append('container_id', box.id)
    refused(await postForm(server, `${FILES}/upload`, editor.token, data), 400, 'invalid_request')
  })
})

describe('token uploads into a container', () => {
  it('the announced type and size are refused with the same codes; a confirmed file lands under the prefix', async () => {
    const box = await container({ prefix: 'scans', allowedTypes: ['image/jpeg'], maxFileBytes: 5000 })
    const token = (body: Record<string, unknown>) =>
      server.request('POST', `${FILES}/upload-token`, {
        token: editor.token,
        body: { filename: 'x.jpg', mime_type: 'image/jpeg', size_bytes: 100, container_id: box.id, ...body },
      })
    refused(await token({ mime_type: 'text/plain', filename: 'x.txt' }), 400, 'invalid_request')
    refused(await token({ size_bytes: 5001 }), 400, 'limit_exceeded')
    const bytes = someBytes(4000)
    const reserved = await token({ size_bytes: bytes.length })
    expect(reserved.status, reserved.text).toBe(200)
    const put = await fetch(reserved.body.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'image/jpeg' },
      body: bytes,
    })
    expect(put.status).toBe(200)
    const confirmed = await server.request('POST', `${FILES}/confirm-upload/${reserved.body.id}`, {
      token: editor.token,
    })
    expect(confirmed.status, confirmed.text).toBe(200)
    const file = await metadata(server, editor.token, reserved.body.id)
    expect(file.r2Key).toMatch(new RegExp(`^projects/[^/]+/files/scans/${file.id}/`))
  })
})

describe('regenerate and delete', () => {
  it('regenerate takes a container id: only the files uploaded into it, made at its sizes', async () => {
    const box = await container({ imageSizes: [{ name: 'wide', size: 100 }] })
    const inside = (await upload(box.id, jpeg, 'image/jpeg', 'in.jpg')).body.data
    const outside = await postForm(
      server,
      `${FILES}/upload`,
      editor.token,
      form({}, { filename: 'out.jpg', type: 'image/jpeg', bytes: jpeg }),
    )
    expect(outside.status, outside.text).toBe(201)
    const reply = await server.request('POST', `${FILES}/regenerate`, {
      token: owner.token,
      body: { containerId: box.id, limit: 50 },
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({ total: 1, processed: 1, regenerated: 1 })
    expect(reply.body.results.map((r: any) => r.id)).toEqual([inside.id])
    expect(Object.keys((await metadata(server, owner.token, inside.id)).variants).sort()).toEqual(['thumbnail', 'wide'])
  })

  it('a container files were uploaded into is refused on delete (409 with the count); an empty one goes', async () => {
    const box = await container({})
    expect((await upload(box.id, someBytes(10), 'application/octet-stream', 'a.bin')).status).toBe(201)
    const reply = await server.request('DELETE', `${BASE}/${box.id}`, { token: owner.token })
    refused(reply, 409, 'conflict')
    expect(reply.body.details).toEqual({ files: 1 })
    const empty = await container({})
    expect((await server.request('DELETE', `${BASE}/${empty.id}`, { token: owner.token })).status).toBe(204)
  })
})
