import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FileUploadEvent } from '../../src/modules/files/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, setGrants, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'
import { download, downloadVia, FILES, metadata, sha256, someBytes, uploadViaToken } from './files-support.js'

// The token upload flow, metadata, listing, downloads and deletes, with the ownership and visibility rules
// of core-api § File endpoints, over the built-in roles (editor: update/delete only what it uploaded).

let server: TestServer
let owner: Account
let admin: Account
let alice: Account // editor
let bob: Account // editor
let vera: Account // viewer
let nobody: Account // a role with no grant at all
const uploads: FileUploadEvent[] = []

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
  alice = await createAccount(server, owner.token, { role: 'editor' })
  bob = await createAccount(server, owner.token, { role: 'editor' })
  vera = await createAccount(server, owner.token, { role: 'viewer' })
  const role = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name: 'nothing' } })
  expect(role.status, role.text).toBe(201)
  nobody = await createAccount(server, owner.token, { role: 'nothing' })
  const made = await server.request('POST', '/api/v1/collections', {
    token: owner.token,
    body: {
      name: 'docs',
      fields: [
        { name: 'title', type: 'text', required: false },
        { name: 'attachment', type: 'file', required: false },
      ],
    },
  })
  expect(made.status, made.text).toBe(201)
  server.app.events.on('file.upload', (event) => void uploads.push(event))
})
afterAll(async () => {
  await server?.stop()
})

describe('the token upload flow', () => {
  it('upload-token, PUT, confirm: the file is complete, measured, listed and downloadable', async () => {
    const bytes = someBytes(50_000)
    const token = await server.request('POST', `${FILES}/upload-token`, {
      token: alice.token,
      body: { filename: 'Report (final).pdf', mime_type: 'application/pdf', size_bytes: bytes.length },
    })
    expect(token.status, token.text).toBe(200)
    expect(Object.keys(token.body).sort()).toEqual(['id', 'r2Key', 'uploadUrl'])
    const { id, uploadUrl, r2Key } = token.body
    expect(id).toMatch(/^[0-9a-f]{32}$/)
    // While pending, the bytes are where the upload URL writes; confirm copies them to the file's own key.
    expect(r2Key).toBe(`projects/${server.app.defaultProject.id}/uploads/${id}/Report_final_.pdf`)

    // Before the bytes arrive: pending, not listed, no download, confirm refused.
    const pending = await metadata(server, alice.token, id)
    expect(pending).toMatchObject({ id, r2Key, status: 'pending', sha256: null })
    expect(
      (await server.request('GET', FILES, { token: alice.token })).body.data.map((f: { id: string }) => f.id),
    ).not.toContain(id)
    expect((await server.request('GET', `${FILES}/download-token/${id}`, { token: alice.token })).status).toBe(404)
    const early = await server.request('POST', `${FILES}/confirm-upload/${id}`, { token: alice.token })
    expect(early.status, early.text).toBe(400)
    expect(early.body.error).toBe('invalid_request')

    const put = await fetch(uploadUrl, { method: 'PUT', headers: { 'content-type': 'application/pdf' }, body: bytes })
    expect(put.status).toBe(200)
    const confirmed = await server.request('POST', `${FILES}/confirm-upload/${id}`, { token: alice.token })
    expect(confirmed.status, confirmed.text).toBe(200)
    expect(confirmed.body).toEqual({ success: true, message: 'Upload confirmed' })

    const file = await metadata(server, alice.token, id)
    expect(file).toEqual({
      id,
      projectId: server.app.defaultProject.id,
      collectionName: '__system',
      r2Key: expect.stringMatching(
        new RegExp(`^projects/${server.app.defaultProject.id}/files/${id}/[0-9a-f]{12}/Report_final_\\.pdf$`),
      ),
      filename: 'Report (final).pdf',
      mimeType: 'application/pdf',
      sizeBytes: bytes.length,
      sha256: sha256(bytes),
      uploadedBy: alice.id,
      visibility: 'public',
      status: 'complete',
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
      variantStatus: 'none',
      variants: {},
      flowKey: null,
    })
    const listed = await server.request('GET', FILES, { token: vera.token })
    expect(listed.status).toBe(200)
    expect(listed.body.data.find((f: { id: string }) => f.id === id)).toEqual(file)

    const got = await downloadVia(server, vera.token, id)
    expect(got.variant).toBeNull()
    expect(got.bytes.equals(bytes)).toBe(true)
    // file.upload went out once, with the file as the API shows it.
    expect(uploads.filter((e) => e.file.id === id)).toEqual([
      {
        projectId: server.app.defaultProject.id,
        file,
        via: 'token',
        principal: { id: alice.id, kind: 'user', role: alice.role },
        at: expect.any(Number),
      },
    ])
  })

  it('confirming twice is harmless and emits no second event', async () => {
    const id = await uploadViaToken(server, alice.token, someBytes(10))
    const again = await server.request('POST', `${FILES}/confirm-upload/${id}`, { token: alice.token })
    expect(again.status).toBe(200)
    expect(again.body).toEqual({ success: true, message: 'Upload already confirmed' })
    await server.request('GET', `${FILES}/${id}`, { token: alice.token }) // lets queued event handlers run
    expect(uploads.filter((e) => e.file.id === id)).toHaveLength(1)
  })

  it("confirm-upload is the uploader's alone: 403 for other editors and for administrators", async () => {
    const id = await uploadViaToken(server, alice.token, someBytes(100), { confirm: false })
    for (const other of [bob, admin, owner]) {
      const reply = await server.request('POST', `${FILES}/confirm-upload/${id}`, { token: other.token })
      expect(reply.status, reply.text).toBe(403)
      expect(reply.body.error).toBe('forbidden')
    }
    expect((await metadata(server, alice.token, id)).status).toBe('pending')
    // A private pending file of someone else is not even there for another editor.
    const hidden = await uploadViaToken(server, alice.token, someBytes(100), { confirm: false, visibility: 'private' })
    expect((await server.request('POST', `${FILES}/confirm-upload/${hidden}`, { token: bob.token })).status).toBe(404)
    expect((await server.request('POST', `${FILES}/confirm-upload/${id}`, { token: alice.token })).status).toBe(200)
  })

  it('a PUT of another size or type than the URL was signed for is refused, and nothing is confirmed', async () => {
    const token = await server.request('POST', `${FILES}/upload-token`, {
      token: alice.token,
      body: { filename: 'a.txt', mime_type: 'text/plain', size_bytes: 10 },
    })
    const tooLong = await fetch(token.body.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'text/plain' },
      body: 'x'.repeat(11),
    })
    expect(tooLong.status).toBeGreaterThanOrEqual(400)
    const otherType = await fetch(token.body.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'text/html' },
      body: 'x'.repeat(10),
    })
    expect(otherType.status).toBeGreaterThanOrEqual(400)
    const confirm = await server.request('POST', `${FILES}/confirm-upload/${token.body.id}`, { token: alice.token })
    expect(confirm.status).toBe(400)
  })

  it('attaches a file to a collection by name; an unknown collection is refused', async () => {
    const id = await uploadViaToken(server, alice.token, someBytes(10), { collection_name: 'docs' })
    expect((await metadata(server, alice.token, id)).collectionName).toBe('docs')
    const filtered = await server.request('GET', `${FILES}?collection_name=docs`, { token: alice.token })
    expect(filtered.body.data.map((f: { id: string }) => f.id)).toEqual([id])
  })
})

describe('upload-token refusals', () => {
  const body = { filename: 'a.bin', mime_type: 'application/octet-stream', size_bytes: 10 }
  runScenarios(
    () => server,
    [
      {
        name: 'anonymous',
        method: 'POST',
        path: `${FILES}/upload-token`,
        body,
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'a viewer lacks system/files:create',
        as: () => vera.token,
        method: 'POST',
        path: `${FILES}/upload-token`,
        body,
        status: 403,
        contains: { error: 'forbidden' },
      },
      {
        name: 'missing filename',
        as: () => alice.token,
        method: 'POST',
        path: `${FILES}/upload-token`,
        body: { mime_type: 'text/plain', size_bytes: 1 },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'missing size',
        as: () => alice.token,
        method: 'POST',
        path: `${FILES}/upload-token`,
        body: { filename: 'a', mime_type: 'text/plain' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'size not an integer',
        as: () => alice.token,
        method: 'POST',
        path: `${FILES}/upload-token`,
        body: { ...body, size_bytes: 1.5 },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'empty file',
        as: () => alice.token,
        method: 'POST',
        path: `${FILES}/upload-token`,
        body: { ...body, size_bytes: 0 },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'not a media type',
        as: () => alice.token,
        method: 'POST',
        path: `${FILES}/upload-token`,
        body: { ...body, mime_type: 'pdf' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'blank filename',
        as: () => alice.token,
        method: 'POST',
        path: `${FILES}/upload-token`,
        body: { ...body, filename: '   ' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'control characters in the filename',
        as: () => alice.token,
        method: 'POST',
        path: `${FILES}/upload-token`,
        body: { ...body, filename: 'a\nb' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'bad visibility',
        as: () => alice.token,
        method: 'POST',
        path: `${FILES}/upload-token`,
        body: { ...body, visibility: 'secret' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'unknown collection',
        as: () => alice.token,
        method: 'POST',
        path: `${FILES}/upload-token`,
        body: { ...body, collection_name: 'nope' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'unknown field',
        as: () => alice.token,
        method: 'POST',
        path: `${FILES}/upload-token`,
        body: { ...body, owner: 'me' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'over 100 MB',
        as: () => alice.token,
        method: 'POST',
        path: `${FILES}/upload-token`,
        body: { ...body, size_bytes: 100 * 1024 * 1024 + 1 },
        status: 400,
        contains: { error: 'limit_exceeded', details: { limit: 100 * 1024 * 1024 } },
      },
    ],
  )

  it('exactly 100 MB is allowed', async () => {
    const reply = await server.request('POST', `${FILES}/upload-token`, {
      token: alice.token,
      body: { ...body, size_bytes: 100 * 1024 * 1024 },
    })
    expect(reply.status, reply.text).toBe(200)
    // Never uploaded: it stays pending and out of every listing.
    expect((await metadata(server, alice.token, reply.body.id)).status).toBe('pending')
  })
})

describe('the project quota (files.quotaBytes)', () => {
  it('counts complete files and pending uploads whose URL may still be used', async () => {
    // A project of its own, so the usage is known exactly: the owner acts in it with X-Project-Id.
    const project = await server.request('POST', '/api/v1/projects', {
      token: owner.token,
      body: { name: 'Quota place' },
    })
    expect(project.status, project.text).toBe(201)
    const headers = { 'X-Project-Id': project.body.data.id }
    const as = { token: owner.token, headers }
    const settings = await server.request('PATCH', '/api/v1/settings', { ...as, body: { 'files.quotaBytes': 1000 } })
    expect(settings.status, settings.text).toBe(200)
    const reserve = (size: number) =>
      server.request('POST', `${FILES}/upload-token`, {
        ...as,
        body: { filename: 'a', mime_type: 'text/plain', size_bytes: size },
      })

    const first = await reserve(600)
    expect(first.status, first.text).toBe(200)
    // 600 are reserved, so another 600 would pass the quota, though nothing is complete yet.
    const second = await reserve(600)
    expect(second.status, second.text).toBe(400)
    expect(second.body).toMatchObject({
      error: 'limit_exceeded',
      details: { quotaBytes: 1000, usedBytes: 600, requestedBytes: 600 },
    })
    const fits = await reserve(400)
    expect(fits.status, fits.text).toBe(200)
    expect((await reserve(1)).status).toBe(400)
    // Deleting the reservation frees its bytes; the default project's own quota never came into it.
    expect((await server.request('DELETE', `${FILES}/${first.body.id}`, as)).status).toBe(200)
    expect((await reserve(600)).status).toBe(200)
    expect(
      (
        await server.request('POST', `${FILES}/upload-token`, {
          token: alice.token,
          body: { filename: 'a', mime_type: 'text/plain', size_bytes: 600 },
        })
      ).status,
    ).toBe(200)
  })

  it('holds under concurrent uploads: of ten 300-byte reservations against 1000 bytes, three pass', async () => {
    const project = await server.request('POST', '/api/v1/projects', {
      token: owner.token,
      body: { name: 'Quota race' },
    })
    expect(project.status, project.text).toBe(201)
    const as = { token: owner.token, headers: { 'X-Project-Id': project.body.data.id } }
    expect(
      (await server.request('PATCH', '/api/v1/settings', { ...as, body: { 'files.quotaBytes': 1000 } })).status,
    ).toBe(200)
    const replies = await Promise.all(
      Array.from({ length: 10 }, () =>
        server.request('POST', `${FILES}/upload-token`, {
          ...as,
          body: { filename: 'a', mime_type: 'text/plain', size_bytes: 300 },
        }),
      ),
    )
    expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 200, 400, 400, 400, 400, 400, 400, 400])
    for (const refused of replies.filter((r) => r.status === 400)) expect(refused.body.error).toBe('limit_exceeded')
  })
})

describe('visibility and ownership', () => {
  let open: string
  let secret: string
  beforeAll(async () => {
    open = await uploadViaToken(server, alice.token, someBytes(64), { filename: 'open.bin' })
    secret = await uploadViaToken(server, alice.token, someBytes(64), { filename: 'secret.bin', visibility: 'private' })
  })

  it('a public file: every reader may read, list and download it', async () => {
    for (const reader of [alice, bob, vera, admin]) {
      expect((await metadata(server, reader.token, open)).visibility).toBe('public')
      const listed = await server.request('GET', `${FILES}?limit=100`, { token: reader.token })
      expect(listed.body.data.map((f: { id: string }) => f.id)).toContain(open)
      expect((await server.request('GET', `${FILES}/download-token/${open}`, { token: reader.token })).status).toBe(200)
    }
  })

  it('a private file: 404 (not 403) for everyone but its uploader and administrators, and absent from their lists', async () => {
    for (const other of [bob, vera]) {
      for (const path of [`${FILES}/${secret}`, `${FILES}/download-token/${secret}`]) {
        const reply = await server.request('GET', path, { token: other.token })
        expect(reply.status, `${path} ${reply.text}`).toBe(404)
        expect(reply.body.error).toBe('not_found')
      }
      const listed = await server.request('GET', `${FILES}?limit=100`, { token: other.token })
      expect(listed.body.data.map((f: { id: string }) => f.id)).not.toContain(secret)
      expect(listed.text).not.toContain('secret.bin')
    }
    for (const insider of [alice, admin, owner]) {
      expect((await metadata(server, insider.token, secret)).visibility).toBe('private')
      const listed = await server.request('GET', `${FILES}?limit=100`, { token: insider.token })
      expect(listed.body.data.map((f: { id: string }) => f.id)).toContain(secret)
    }
  })

  it('a role without system/files:read gets 403; an unknown id 404', async () => {
    expect((await server.request('GET', FILES, { token: nobody.token })).status).toBe(403)
    expect((await server.request('GET', `${FILES}/${open}`, { token: nobody.token })).status).toBe(403)
    expect((await server.request('GET', `${FILES}/${'0'.repeat(32)}`, { token: alice.token })).status).toBe(404)
    expect((await server.request('GET', `${FILES}/not-an-id`, { token: alice.token })).status).toBe(404)
    expect(
      (await server.request('GET', `${FILES}/download-token/${'0'.repeat(32)}`, { token: alice.token })).status,
    ).toBe(404)
  })

  it('lists complete files newest first with the list envelope', async () => {
    const listed = await server.request('GET', `${FILES}?limit=3`, { token: owner.token })
    expect(listed.status).toBe(200)
    expect(listed.body).toMatchObject({ page: 1, limit: 3, hasMore: true, total: expect.any(Number) })
    expect(listed.body.data).toHaveLength(3)
    const all = await server.request('GET', `${FILES}?limit=100`, { token: owner.token })
    const created = all.body.data.map((f: { createdAt: number }) => f.createdAt)
    expect(created).toEqual([...created].sort((a, b) => b - a))
    expect(all.body.data.every((f: { status: string }) => f.status === 'complete')).toBe(true)
    expect(all.body.total).toBe(all.body.data.length)
    const page2 = await server.request('GET', `${FILES}?limit=3&page=2`, { token: owner.token })
    expect(page2.body.data.map((f: { id: string }) => f.id)).toEqual(
      all.body.data.slice(3, 6).map((f: { id: string }) => f.id),
    )
  })
})

describe('DELETE /api/v1/files/:id', () => {
  it('an editor deletes only what it uploaded (item_filter uploadedBy = $CURRENT_USER); the bytes go too', async () => {
    const bytes = someBytes(200)
    const id = await uploadViaToken(server, alice.token, bytes)
    const url = (await server.request('GET', `${FILES}/download-token/${id}`, { token: alice.token })).body.downloadUrl
    const refused = await server.request('DELETE', `${FILES}/${id}`, { token: bob.token })
    expect(refused.status, refused.text).toBe(403)
    expect(refused.body.error).toBe('forbidden')
    expect((await server.request('DELETE', `${FILES}/${id}`, { token: vera.token })).status).toBe(403)
    expect((await download(url)).bytes.equals(bytes)).toBe(true)

    const deleted = await server.request('DELETE', `${FILES}/${id}`, { token: alice.token })
    expect(deleted.status, deleted.text).toBe(200)
    expect(deleted.body).toEqual({ success: true, message: 'File deleted' })
    expect((await server.request('GET', `${FILES}/${id}`, { token: alice.token })).status).toBe(404)
    expect((await server.request('DELETE', `${FILES}/${id}`, { token: alice.token })).status).toBe(404)
    expect((await download(url)).status).toBe(404)
  })

  it("an administrator deletes anyone's file; another editor gets 404 for a private one", async () => {
    const secret = await uploadViaToken(server, alice.token, someBytes(20), { visibility: 'private' })
    expect((await server.request('DELETE', `${FILES}/${secret}`, { token: bob.token })).status).toBe(404)
    expect((await server.request('DELETE', `${FILES}/${secret}`, { token: admin.token })).status).toBe(200)
    expect((await server.request('GET', `${FILES}/${secret}`, { token: alice.token })).status).toBe(404)
  })

  it('a custom grant scopes deletes by its own item_filter over the file object', async () => {
    const role = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name: 'doc_cleaner' } })
    expect(role.status).toBe(201)
    await setGrants(server, owner.token, 'doc_cleaner', [
      { resource: 'system/files', action: 'read' },
      { resource: 'system/files', action: 'delete', item_filter: { collectionName: { _eq: 'docs' } } },
    ])
    const cleaner = await createAccount(server, owner.token, { role: 'doc_cleaner' })
    const inDocs = await uploadViaToken(server, alice.token, someBytes(20), { collection_name: 'docs' })
    const loose = await uploadViaToken(server, alice.token, someBytes(20))
    expect((await server.request('DELETE', `${FILES}/${loose}`, { token: cleaner.token })).status).toBe(403)
    expect((await server.request('DELETE', `${FILES}/${inDocs}`, { token: cleaner.token })).status).toBe(200)
  })
})

describe('permanent record deletes take their files', () => {
  it('a permanent delete removes the files in its file fields attached to that collection; a soft delete keeps them', async () => {
    const attached = await uploadViaToken(server, alice.token, someBytes(30), { collection_name: 'docs' })
    const unattached = await uploadViaToken(server, alice.token, someBytes(30))
    const soft = await uploadViaToken(server, alice.token, someBytes(30), { collection_name: 'docs' })
    const make = async (file: string) => {
      const reply = await server.request('POST', '/api/v1/collections/docs/records', {
        token: alice.token,
        body: { title: 't', attachment: file },
      })
      expect(reply.status, reply.text).toBe(201)
      return reply.body.id as string
    }
    const recordA = await make(attached)
    const recordB = await make(unattached)
    const recordC = await make(soft)

    expect(
      (await server.request('DELETE', `/api/v1/collections/docs/records/${recordC}`, { token: alice.token })).status,
    ).toBe(200)
    expect(
      (
        await server.request('DELETE', `/api/v1/collections/docs/records/${recordA}?permanent=true`, {
          token: owner.token,
        })
      ).status,
    ).toBe(200)
    expect(
      (
        await server.request('DELETE', `/api/v1/collections/docs/records/${recordB}?permanent=true`, {
          token: owner.token,
        })
      ).status,
    ).toBe(200)

    // The removal follows the event; poll until it has happened.
    for (
      let i = 0;
      i < 200 && (await server.request('GET', `${FILES}/${attached}`, { token: owner.token })).status !== 404;
      i++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    expect((await server.request('GET', `${FILES}/${attached}`, { token: owner.token })).status).toBe(404)
    // Not attached to docs (its collection is __system): kept. Soft-deleted record: kept.
    expect((await metadata(server, owner.token, unattached)).status).toBe('complete')
    expect((await metadata(server, owner.token, soft)).status).toBe('complete')
  })

  it('deleting a collection removes the files attached to it, and only those', async () => {
    const made = await server.request('POST', '/api/v1/collections', {
      token: owner.token,
      body: { name: 'scratch', fields: [{ name: 'attachment', type: 'file', required: false }] },
    })
    expect(made.status, made.text).toBe(201)
    const attached = await uploadViaToken(server, alice.token, someBytes(30), { collection_name: 'scratch' })
    const elsewhere = await uploadViaToken(server, alice.token, someBytes(30), { collection_name: 'docs' })
    expect((await server.request('DELETE', '/api/v1/collections/scratch', { token: owner.token })).status).toBe(200)
    expect((await server.request('GET', `${FILES}/${attached}`, { token: owner.token })).status).toBe(404)
    expect((await metadata(server, owner.token, elsewhere)).status).toBe('complete')
  })

  it('a permanent bulk delete removes them too', async () => {
    const file = await uploadViaToken(server, alice.token, someBytes(30), { collection_name: 'docs' })
    const reply = await server.request('POST', '/api/v1/collections/docs/records', {
      token: alice.token,
      body: { title: 't', attachment: file },
    })
    expect(reply.status, reply.text).toBe(201)
    const bulk = await server.request('DELETE', '/api/v1/collections/docs/records/bulk?permanent=true', {
      token: owner.token,
      body: { ids: [reply.body.id] },
    })
    expect(bulk.status, bulk.text).toBe(200)
    expect(bulk.body.deleted).toBe(1)
    for (
      let i = 0;
      i < 200 && (await server.request('GET', `${FILES}/${file}`, { token: owner.token })).status !== 404;
      i++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    expect((await server.request('GET', `${FILES}/${file}`, { token: owner.token })).status).toBe(404)
  })
})

describe('the API description', () => {
  it('lists every file operation with its permission', async () => {
    const reply = await server.request('GET', '/api/openapi.json')
    expect(reply.status).toBe(200)
    const operations: Record<string, string> = {}
    for (const [path, methods] of Object.entries(
      reply.body.paths as Record<string, Record<string, { operationId: string; 'x-permission': string }>>,
    )) {
      if (!path.startsWith(FILES)) continue
      for (const [method, op] of Object.entries(methods))
        operations[`${method.toUpperCase()} ${path}`] = `${op.operationId} ${op['x-permission']}`
    }
    expect(operations).toEqual({
      'POST /api/v1/files/upload-token': 'files.uploadToken system/files:create',
      'POST /api/v1/files/confirm-upload/{id}': 'files.confirmUpload system/files:create',
      'GET /api/v1/files/download-token/{id}': 'files.downloadToken system/files:read',
      'GET /api/v1/files': 'files.list system/files:read',
      'GET /api/v1/files/{id}': 'files.get system/files:read',
      'POST /api/v1/files/{id}/replace': 'files.replace system/files:update',
      'DELETE /api/v1/files/{id}': 'files.delete system/files:delete',
      'POST /api/v1/files/{id}/regenerate': 'files.regenerate system/files:update',
      'POST /api/v1/files/regenerate': 'files.regenerateAll system/files:update',
      'POST /api/v1/files/{id}/variant': 'files.attachVariant system/files:create',
      'POST /api/v1/files/upload': 'files.upload system/files:create',
    })
    expect(Object.keys(reply.body.paths[`${FILES}/upload`].post.requestBody.content)).toEqual(['multipart/form-data'])
  })
})
