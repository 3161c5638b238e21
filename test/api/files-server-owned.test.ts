import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'
import {
  downloadVia,
  FILES,
  form,
  image,
  metadata,
  postForm,
  sha256,
  someBytes,
  uploadViaToken,
} from './files-support.js'

// Server-owned fields a client sends (docs/files.md § Server-owned fields) are accepted and ignored, the
// stored values shown; any other unknown property is still refused.

let server: TestServer
let alice: Account // editor
let bob: Account // editor
let project: string

beforeAll(async () => {
  server = await startServer()
  const owner = await signUpOwner(server)
  alice = await createAccount(server, owner.token, { role: 'editor' })
  bob = await createAccount(server, owner.token, { role: 'editor' })
  project = server.app.defaultProject.id
})
afterAll(async () => {
  await server?.stop()
})

const forgedId = 'f'.repeat(32)
/** Every server-owned field, as a client might claim them, in the File object's camelCase and in snake_case. */
const claims = () => ({
  id: forgedId,
  projectId: 'another-project',
  project_id: 'another-project',
  r2Key: 'projects/another-project/files/x/evil.bin',
  r2_key: 'projects/another-project/files/x/evil.bin',
  sha256: '0'.repeat(64),
  uploadedBy: bob.id,
  uploaded_by: bob.id,
  status: 'complete',
  createdAt: 1,
  created_at: 1,
  updatedAt: 1,
  updated_at: 1,
  variantStatus: 'ready',
  variant_status: 'ready',
  variants: {
    thumbnail: { r2Key: 'projects/x/y', width: 1, height: 1, sizeBytes: 1, mimeType: 'image/png', source: 'client' },
  },
})
/** The same claims as form fields (strings). */
const formClaims = () =>
  Object.fromEntries(
    Object.entries(claims()).map(([name, value]) => [name, typeof value === 'string' ? value : JSON.stringify(value)]),
  )

describe('POST /api/v1/files/upload-token', () => {
  it("accepts uploadedBy of another user (and every other server-owned field) and ignores them: the file is the caller's", async () => {
    const bytes = someBytes(64)
    const before = Math.floor(Date.now() / 1000)
    const reply = await server.request('POST', `${FILES}/upload-token`, {
      token: alice.token,
      body: { filename: 'mine.bin', mime_type: 'application/octet-stream', size_bytes: bytes.length, ...claims() },
    })
    expect(reply.status, reply.text).toBe(200)
    const { id, r2Key, uploadUrl } = reply.body
    expect(id).toMatch(/^[0-9a-f]{32}$/)
    expect(id).not.toBe(forgedId)
    expect(r2Key).toBe(`projects/${project}/uploads/${id}/mine.bin`)

    const stored = await metadata(server, alice.token, id)
    expect(stored).toMatchObject({
      id,
      projectId: project,
      r2Key,
      uploadedBy: alice.id,
      status: 'pending',
      sha256: null,
      variantStatus: 'none',
      variants: {},
    })
    expect(stored.createdAt).toBeGreaterThanOrEqual(before - 1)
    expect(stored.updatedAt).toBe(stored.createdAt)
    expect((await server.request('GET', `${FILES}/${forgedId}`, { token: alice.token })).status).toBe(404)

    // Still alice's: she confirms it, bob (an editor, who may delete only his own uploads) may not delete it.
    expect(
      (await fetch(uploadUrl, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: bytes }))
        .status,
    ).toBe(200)
    expect((await server.request('POST', `${FILES}/confirm-upload/${id}`, { token: bob.token })).status).toBe(403)
    expect((await server.request('POST', `${FILES}/confirm-upload/${id}`, { token: alice.token })).status).toBe(200)
    expect(await metadata(server, alice.token, id)).toMatchObject({
      uploadedBy: alice.id,
      status: 'complete',
      sha256: sha256(bytes),
    })
    expect((await server.request('DELETE', `${FILES}/${id}`, { token: bob.token })).status).toBe(403)
  })

  const body = { filename: 'a.bin', mime_type: 'application/octet-stream', size_bytes: 10 }
  runScenarios(
    () => server,
    [
      {
        name: 'uploaded_by alone is accepted and ignored',
        as: () => alice.token,
        method: 'POST',
        path: `${FILES}/upload-token`,
        body: { ...body, uploaded_by: 'someone' },
        status: 200,
      },
      {
        name: "a field that is not the server's is still unknown",
        as: () => alice.token,
        method: 'POST',
        path: `${FILES}/upload-token`,
        body: { ...body, uploadedBy: 'x', owner: 'me' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'the camelCase spelling of a client field is still unknown',
        as: () => alice.token,
        method: 'POST',
        path: `${FILES}/upload-token`,
        body: { ...body, sizeBytes: 10 },
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )
})

describe('the multipart routes', () => {
  it("POST /upload: server-owned form fields are ignored; the file is the caller's, measured by the server", async () => {
    const bytes = someBytes(100)
    const reply = await postForm(
      server,
      `${FILES}/upload`,
      alice.token,
      form({ visibility: 'private', ...formClaims() }, { filename: 'p.bin', type: 'application/octet-stream', bytes }),
    )
    expect(reply.status, reply.text).toBe(201)
    const file = reply.body.data
    expect(file).toMatchObject({
      projectId: project,
      uploadedBy: alice.id,
      visibility: 'private',
      status: 'complete',
      sha256: sha256(bytes),
      sizeBytes: 100,
      variantStatus: 'none',
      variants: {},
    })
    expect(file.id).not.toBe(forgedId)
    expect(file.r2Key).toMatch(new RegExp(`^projects/${project}/files/${file.id}/`))
    expect(file.createdAt).toBeGreaterThan(1)
    expect(await metadata(server, alice.token, file.id)).toEqual(file)
  })

  it('POST /:id/replace: server-owned form fields are ignored; the answer shows the stored file', async () => {
    const id = await uploadViaToken(server, alice.token, someBytes(10))
    const before = await metadata(server, alice.token, id)
    const bytes = someBytes(20)
    const reply = await postForm(
      server,
      `${FILES}/${id}/replace`,
      alice.token,
      form(formClaims(), { filename: 'n.bin', type: 'application/octet-stream', bytes }),
    )
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toMatchObject({
      id,
      uploadedBy: alice.id,
      createdAt: before.createdAt,
      status: 'complete',
      sha256: sha256(bytes),
      sizeBytes: 20,
    })
    expect(await metadata(server, alice.token, id)).toEqual(reply.body.data)
    expect((await downloadVia(server, alice.token, id)).bytes.equals(bytes)).toBe(true)
  })

  it('POST /:id/variant: server-owned form fields are ignored', async () => {
    const id = await uploadViaToken(server, alice.token, someBytes(10))
    const png = await image('png', 20, 20)
    const reply = await postForm(
      server,
      `${FILES}/${id}/variant`,
      alice.token,
      form({ name: 'preview', ...formClaims() }, { filename: 'p.png', type: 'image/png', bytes: png }),
    )
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toMatchObject({ id, uploadedBy: alice.id, status: 'complete' })
    expect(Object.keys(reply.body.data.variants)).toEqual(['preview'])
  })

  it("an unknown form field that is not the server's is still 400, and nothing is stored", async () => {
    const stored = await server.app.storage.list(`projects/${project}/`, 1000)
    const reply = await postForm(
      server,
      `${FILES}/upload`,
      alice.token,
      form(
        { uploadedBy: bob.id, owner: bob.id },
        { filename: 'x.bin', type: 'application/octet-stream', bytes: someBytes(5) },
      ),
    )
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body).toMatchObject({ error: 'invalid_request', details: { field: 'owner' } })
    expect(await server.app.storage.list(`projects/${project}/`, 1000)).toEqual(stored)
  })
})
