import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { shiftableClock } from '../../src/lib/storage/contract.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { downloadVia, FILES, metadata, sha256 } from './files-support.js'

// An upload URL is single-use (docs/files.md § Upload with a presigned URL), here on the local driver,
// which serves its own URLs and refuses a second PUT; files-s3.test.ts has the same attack against S3.

const { clock, shift } = shiftableClock()
let server: TestServer
let alice: Account
let project: string

beforeAll(async () => {
  server = await startServer({}, { clock })
  const owner = await signUpOwner(server)
  alice = await createAccount(server, owner.token, { role: 'editor' })
  project = server.app.defaultProject.id
})
afterEach(() => shift(0))
afterAll(async () => {
  await server?.stop()
})

/** upload-token for a 5-byte text file, and a PUT through its URL. */
async function reserve(): Promise<{ id: string; put: (body: string) => Promise<{ status: number; body: any }> }> {
  const token = await server.request('POST', `${FILES}/upload-token`, {
    token: alice.token,
    body: { filename: 'note.txt', mime_type: 'text/plain', size_bytes: 5 },
  })
  expect(token.status, token.text).toBe(200)
  const put = async (body: string) => {
    const res = await fetch(token.body.uploadUrl, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body })
    const text = await res.text()
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
  }
  return { id: token.body.id, put }
}

const confirm = (id: string) => server.request('POST', `${FILES}/confirm-upload/${id}`, { token: alice.token })
const keysUnder = (prefix: string) => server.app.storage.list(prefix, 100)

describe('an upload URL stores once (local storage)', () => {
  it('PUT "hello", confirm, PUT "EVIL!" to the same URL: 409 conflict; downloads return "hello", matching its SHA-256', async () => {
    const { id, put } = await reserve()
    expect((await put('hello')).status).toBe(200)
    expect((await confirm(id)).status).toBe(200)

    const again = await put('EVIL!')
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ error: 'conflict', message: expect.stringContaining('already used') })
    const file = await metadata(server, alice.token, id)
    expect(file).toMatchObject({ status: 'complete', sizeBytes: 5, sha256: sha256(Buffer.from('hello')) })
    expect((await downloadVia(server, alice.token, id)).bytes.toString()).toBe('hello')
  })

  it('a second PUT before confirm is refused too, and confirm records the first bytes', async () => {
    const { id, put } = await reserve()
    expect((await put('first')).status).toBe(200)
    expect((await put('other')).status).toBe(409)
    expect((await confirm(id)).status).toBe(200)
    expect((await metadata(server, alice.token, id)).sha256).toBe(sha256(Buffer.from('first')))
    expect((await downloadVia(server, alice.token, id)).bytes.toString()).toBe('first')
  })

  it('a refused PUT (wrong size) does not use the URL up', async () => {
    const { id, put } = await reserve()
    expect((await put('toolong')).status).toBe(413)
    expect((await put('right')).status).toBe(200)
    expect((await confirm(id)).status).toBe(200)
    expect((await downloadVia(server, alice.token, id)).bytes.toString()).toBe('right')
  })

  it('confirm serves a copy under files/<id>/<revision>/, a key no upload URL points at', async () => {
    const { id, put } = await reserve()
    const pending = await metadata(server, alice.token, id)
    expect(pending.r2Key).toBe(`projects/${project}/uploads/${id}/note.txt`)
    expect((await put('hello')).status).toBe(200)
    expect((await confirm(id)).status).toBe(200)
    const file = await metadata(server, alice.token, id)
    expect(file.r2Key).toMatch(new RegExp(`^projects/${project}/files/${id}/[0-9a-f]{12}/note\\.txt$`))
    expect(await keysUnder(`projects/${project}/files/${id}/`)).toEqual([file.r2Key])
  })
})

describe("the upload URL's key after confirm", () => {
  it('is kept while the URL may live, then removed by the sweep; the file keeps its bytes', async () => {
    const { id, put } = await reserve()
    expect((await put('hello')).status).toBe(200)
    expect((await confirm(id)).status).toBe(200)
    const uploads = `projects/${project}/uploads/${id}/`
    expect(await keysUnder(uploads)).toHaveLength(1)

    await server.app.files.sweep()
    expect(await keysUnder(uploads)).toHaveLength(1)
    // 2 minutes of URL life and 15 of tolerated clock skew later, the URL is dead and its key goes.
    shift(17 * 60_000 + 2000)
    expect((await put('EVIL!')).status).toBe(403)
    await server.app.files.sweep()
    expect(await keysUnder(uploads)).toEqual([])
    expect(await metadata(server, alice.token, id)).toMatchObject({
      status: 'complete',
      sha256: sha256(Buffer.from('hello')),
    })
    expect((await downloadVia(server, alice.token, id)).bytes.toString()).toBe('hello')
  })

  it('goes with the file when it is deleted, pending or confirmed', async () => {
    const pending = await reserve()
    expect((await pending.put('hello')).status).toBe(200)
    expect((await server.request('DELETE', `${FILES}/${pending.id}`, { token: alice.token })).status).toBe(200)
    expect(await keysUnder(`projects/${project}/uploads/${pending.id}/`)).toEqual([])

    const done = await reserve()
    expect((await done.put('hello')).status).toBe(200)
    expect((await confirm(done.id)).status).toBe(200)
    expect((await server.request('DELETE', `${FILES}/${done.id}`, { token: alice.token })).status).toBe(200)
    expect(await keysUnder(`projects/${project}/uploads/${done.id}/`)).toEqual([])
    expect(await keysUnder(`projects/${project}/files/${done.id}/`)).toEqual([])
  })

  it('goes with an abandoned upload an hour after its token', async () => {
    const { id, put } = await reserve()
    expect((await put('hello')).status).toBe(200)
    shift(3600_000 + 2000)
    await server.app.files.sweep()
    expect((await server.request('GET', `${FILES}/${id}`, { token: alice.token })).status).toBe(404)
    expect(await keysUnder(`projects/${project}/uploads/${id}/`)).toEqual([])
  })
})
