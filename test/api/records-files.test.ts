import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { actingPrincipalOf, type RecordEvent } from '../../src/modules/records/index.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, setGrants, signUpOwner, type Account } from '../support/identity.js'
import { downloadVia, FILES, metadata, someBytes, uploadViaToken } from './files-support.js'
import { client, createCollection, createRecord, expectError, listAll, recordsPath } from './records-fixtures.js'

// Files named in records (decision 011): a `file` field takes only files the writer may read, and a file
// goes with a record (single, bulk or cascaded delete) or a collection only when the acting principal could
// delete it through DELETE /files/:id and no record still holds it. Relation cascades apply whatever the
// caller's row rules on the children, and name the caller as the actor of every write they cause.

let server: TestServer
let owner: Account
let alice: Account // editor A
let bob: Account // editor B
/** May delete collections and its own files (schema/*:delete, system/files delete on its uploads). */
let keeper: Account
/** May write docs and read them, but holds no system/files grant at all. */
let scribe: Account
/** A file of another project (the owner acts there with X-Project-Id). */
let foreign: string
const { post, patch, del } = client(() => server)

const docs = 'rf_docs'
const albums = 'rf_albums'
const parents = 'rf_parents'
const children = 'rf_children' // private preset: editors see only their own children
const links = 'rf_links'
const missing = '0123456789abcdef0123456789abcdef'
const fileField = { name: 'attachment', type: 'file', required: false }

const events: { type: 'record.update' | 'record.delete'; event: RecordEvent }[] = []
const stops: (() => void)[] = []

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  alice = await createAccount(server, owner.token, { role: 'editor' })
  bob = await createAccount(server, owner.token, { role: 'editor' })
  for (const [name, grants] of [
    [
      'rf_keeper',
      [
        { resource: 'schema/*', action: 'delete' },
        { resource: 'collections/*', action: 'read' },
        { resource: 'system/files', action: 'read' },
        { resource: 'system/files', action: 'create' },
        { resource: 'system/files', action: 'delete', item_filter: { uploadedBy: { _eq: '$CURRENT_USER' } } },
      ],
    ],
    [
      'rf_scribe',
      [
        { resource: `collections/${docs}`, action: 'read' },
        { resource: `collections/${docs}`, action: 'create' },
      ],
    ],
  ] as const) {
    expect((await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name } })).status).toBe(201)
    await setGrants(server, owner.token, name, [...grants])
  }
  keeper = await createAccount(server, owner.token, { role: 'rf_keeper' })
  scribe = await createAccount(server, owner.token, { role: 'rf_scribe' })

  await createCollection(server, owner.token, docs, [{ name: 'title', type: 'text', required: false }, fileField])
  await createCollection(server, owner.token, albums, [{ name: 'cover', type: 'file', required: false }])
  await createCollection(server, owner.token, parents, [{ name: 'name', type: 'text', required: true }])
  await createCollection(
    server,
    owner.token,
    children,
    [
      { name: 'name', type: 'text', required: true },
      {
        name: 'parent',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: parents, relationType: 'belongsTo', onDelete: 'cascade' },
      },
      fileField,
    ],
    { accessControl: { preset: 'private' } },
  )
  await createCollection(server, owner.token, links, [
    {
      name: 'parent',
      type: 'relation',
      required: false,
      relationConfig: { targetCollection: parents, relationType: 'belongsTo', onDelete: 'set-null' },
    },
  ])

  const project = await server.request('POST', '/api/v1/projects', { token: owner.token, body: { name: 'Elsewhere' } })
  expect(project.status, project.text).toBe(201)
  foreign = await uploadElsewhere(project.body.data.id)

  for (const type of ['record.update', 'record.delete'] as const)
    stops.push(server.app.events.on(type, (event) => void events.push({ type, event })))
})
afterAll(async () => {
  for (const stop of stops) stop()
  await server?.stop()
})

/** The owner's upload in another project: upload-token, PUT, confirm, acting there with X-Project-Id. */
async function uploadElsewhere(projectId: string): Promise<string> {
  const as = { token: owner.token, headers: { 'X-Project-Id': projectId } }
  const bytes = someBytes(40)
  const token = await server.request('POST', `${FILES}/upload-token`, {
    ...as,
    body: { filename: 'far.bin', mime_type: 'application/octet-stream', size_bytes: bytes.length },
  })
  expect(token.status, token.text).toBe(200)
  expect(
    (
      await fetch(token.body.uploadUrl, {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream' },
        body: bytes,
      })
    ).status,
  ).toBe(200)
  expect((await server.request('POST', `${FILES}/confirm-upload/${token.body.id}`, as)).status).toBe(200)
  return token.body.id
}

/** A file uploaded by `who`, attached to a collection, with its bytes. */
async function fileOf(
  who: Account,
  collection: string,
  visibility: 'public' | 'private' = 'public',
): Promise<{ id: string; bytes: Buffer }> {
  const bytes = someBytes(64)
  return { id: await uploadViaToken(server, who.token, bytes, { collection_name: collection, visibility }), bytes }
}

/** The file is still there for its uploader: metadata, and the very bytes through a download URL. */
async function expectKept(
  file: { id: string; bytes: Buffer },
  uploader: Account,
  collectionName?: string,
): Promise<void> {
  const meta = await metadata(server, uploader.token, file.id)
  expect(meta.status).toBe('complete')
  if (collectionName !== undefined) expect(meta.collectionName).toBe(collectionName)
  expect((await downloadVia(server, uploader.token, file.id)).bytes.equals(file.bytes)).toBe(true)
}

/** Polls until the file is gone (files go with a record after its event, in the background). */
async function expectGone(id: string): Promise<void> {
  await vi.waitFor(
    async () => expect((await server.request('GET', `${FILES}/${id}`, { token: owner.token })).status).toBe(404),
    { timeout: 10_000, interval: 25 },
  )
}

/**
 * A barrier: alice deletes a record holding her own file, permanently, and waits until the file is gone.
 * The files of deleted records are settled one delete after another, in order, so every earlier delete's
 * files are settled too. (It is also the no-regression case: one's own file goes with one's record.)
 */
async function settle(): Promise<void> {
  const own = await fileOf(alice, docs)
  const record = await createRecord(server, alice.token, docs, { title: 'barrier', attachment: own.id })
  expect((await del(recordsPath(docs, record.id, { permanent: true }), alice.token)).status).toBe(200)
  await expectGone(own.id)
}

const refusal = {
  error: 'validation_error',
  message: '"attachment" must name a file you may read',
  details: { field: 'attachment' },
}

describe('a file field takes only files the writer may read', () => {
  it("another editor's private file, a missing file and another project's file are refused alike: 422 naming the field, nothing stored", async () => {
    const hidden = await fileOf(bob, docs, 'private')
    const replies: Reply[] = []
    for (const [title, id] of [
      ['hidden', hidden.id],
      ['missing', missing],
      ['foreign', foreign],
    ] as const) {
      const reply = await post(recordsPath(docs), alice.token, { title: `refused ${title}`, attachment: id })
      expectError(reply, 422, 'validation_error')
      expect(reply.text).not.toContain(id)
      replies.push(reply)
    }
    // One answer for all three: nothing tells a hidden file from one that does not exist.
    for (const reply of replies) expect(reply.body).toEqual(refusal)
    const titles = (await listAll(server, owner.token, docs)).map((r) => r.title)
    expect(titles.filter((t) => String(t).startsWith('refused'))).toEqual([])
  })

  it('an update is refused the same way and leaves the record as it was', async () => {
    const hidden = await fileOf(bob, docs, 'private')
    const record = await createRecord(server, alice.token, docs, { title: 'to update' })
    for (const id of [hidden.id, missing, foreign]) {
      const reply = await patch(recordsPath(docs, record.id), alice.token, { title: 'changed', attachment: id })
      expectError(reply, 422, 'validation_error')
      expect(reply.body).toEqual(refusal)
    }
    const stored = await server.request('GET', recordsPath(docs, record.id), { token: owner.token })
    expect(stored.body.data).toEqual(record)
  })

  it("files the writer may read are stored: its own private file, another editor's public file", async () => {
    const own = await fileOf(alice, docs, 'private')
    const shared = await fileOf(bob, docs, 'public')
    expect((await createRecord(server, alice.token, docs, { attachment: own.id })).attachment).toBe(own.id)
    expect((await createRecord(server, alice.token, docs, { attachment: shared.id })).attachment).toBe(shared.id)
  })

  it('a writer without system/files:read may store no file id, even of a public file', async () => {
    const shared = await fileOf(bob, docs, 'public')
    const reply = await post(recordsPath(docs), scribe.token, { attachment: shared.id })
    expectError(reply, 422, 'validation_error')
    expect(reply.body).toEqual(refusal)
    expect((await post(recordsPath(docs), scribe.token, { title: 'no file' })).status).toBe(201)
  })

  it('an update does not check again the file a record holds already', async () => {
    const hidden = await fileOf(bob, docs, 'private')
    const record = await createRecord(server, bob.token, docs, { title: "bob's", attachment: hidden.id })
    // Alice may update any docs record: changing the title, or resending the file unchanged, is fine.
    const renamed = await patch(recordsPath(docs, record.id), alice.token, {
      title: 'renamed by alice',
      attachment: hidden.id,
    })
    expect(renamed.status, renamed.text).toBe(200)
    expect(renamed.body.attachment).toBe(hidden.id)
    const other = await fileOf(bob, docs, 'private')
    expect((await patch(recordsPath(docs, record.id), alice.token, { attachment: other.id })).body).toEqual(refusal)
  })

  it('each import line is checked as a create: refused lines are reported alike, the others imported', async () => {
    const hidden = await fileOf(bob, docs, 'private')
    const own = await fileOf(alice, docs)
    const body = [
      { title: 'import own', attachment: own.id },
      { title: 'import hidden', attachment: hidden.id },
      { title: 'import missing', attachment: missing },
    ]
      .map((line) => JSON.stringify(line))
      .join('\n')
    const reply = await server.request('POST', `${recordsPath(docs)}/import-ndjson`, {
      token: alice.token,
      rawBody: body,
      headers: { 'content-type': 'application/x-ndjson' },
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({ imported: 1, failed: 2, total: 3 })
    const lineError = { code: 'validation_error', message: refusal.message, field: 'attachment' }
    expect(reply.body.errors).toEqual([
      { line: 2, ...lineError },
      { line: 3, ...lineError },
    ])
    const titles = (await listAll(server, owner.token, docs)).map((r) => r.title)
    expect(titles).toContain('import own')
    expect(titles).not.toContain('import hidden')
  })
})

describe('a file goes with a record only under the actor’s file permissions, once no record holds it', () => {
  it("another editor's file named in a record survives that record's permanent delete; one's own goes", async () => {
    const theirs = await fileOf(bob, docs, 'public')
    const record = await createRecord(server, alice.token, docs, { title: 'points at bob', attachment: theirs.id })
    // Alice may not delete bob's file herself…
    expectError(await del(`${FILES}/${theirs.id}`, alice.token), 403, 'forbidden')
    // …so deleting her record does not delete it either.
    expect((await del(recordsPath(docs, record.id, { permanent: true }), alice.token)).status).toBe(200)
    await settle()
    await expectKept(theirs, bob, docs)
  })

  it('a file two records hold survives the delete of one, and goes with the last', async () => {
    const own = await fileOf(alice, docs)
    const first = await createRecord(server, alice.token, docs, { title: 'first holder', attachment: own.id })
    const second = await createRecord(server, alice.token, docs, { title: 'second holder', attachment: own.id })
    expect((await del(recordsPath(docs, first.id, { permanent: true }), alice.token)).status).toBe(200)
    await settle()
    await expectKept(own, alice, docs)
    expect((await del(recordsPath(docs, second.id, { permanent: true }), alice.token)).status).toBe(200)
    await expectGone(own.id)
  })

  it('a soft-deleted record of another collection still holds it (it can be restored)', async () => {
    const own = await fileOf(alice, docs)
    const record = await createRecord(server, alice.token, docs, { title: 'holder', attachment: own.id })
    const album = await createRecord(server, alice.token, albums, { cover: own.id })
    expect((await del(recordsPath(albums, album.id), alice.token)).status).toBe(200)
    expect((await del(recordsPath(docs, record.id, { permanent: true }), alice.token)).status).toBe(200)
    await settle()
    await expectKept(own, alice, docs)
    // Restored, the album still shows its cover.
    expect((await post(`${recordsPath(albums, album.id)}/restore`, alice.token)).status).toBe(200)
    expect((await downloadVia(server, alice.token, own.id)).bytes.equals(own.bytes)).toBe(true)
  })

  it("a permanent bulk delete: the actor's own file goes, another editor's stays", async () => {
    const theirs = await fileOf(bob, docs, 'public')
    const own = await fileOf(alice, docs)
    const a = await createRecord(server, alice.token, docs, { title: 'bulk theirs', attachment: theirs.id })
    const b = await createRecord(server, alice.token, docs, { title: 'bulk own', attachment: own.id })
    const reply = await server.request('DELETE', `${recordsPath(docs)}/bulk?permanent=true`, {
      token: alice.token,
      body: { ids: [a.id, b.id] },
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.deleted).toBe(2)
    // Deletes are settled in order: once the second record's file is gone, the first's was decided.
    await expectGone(own.id)
    await expectKept(theirs, bob, docs)
  })
})

describe('relation cascades: the schema’s rule, the caller’s actor, the caller’s file permissions', () => {
  it("a cascade by one editor removes another's child it cannot read, keeps that child's file, and names the editor in every event", async () => {
    const parent = await createRecord(server, alice.token, parents, { name: 'alice parent' })
    const theirs = await fileOf(bob, children, 'private')
    const child = await createRecord(server, bob.token, children, {
      name: "bob's child",
      parent: parent.id,
      attachment: theirs.id,
    })
    const link = await createRecord(server, bob.token, links, { parent: parent.id })
    // Alice cannot see bob's child (private collection), nor delete it.
    expect((await server.request('GET', recordsPath(children, child.id), { token: alice.token })).status).toBe(404)
    expect((await del(recordsPath(children, child.id, { permanent: true }), alice.token)).status).toBe(404)

    const from = events.length
    expect((await del(recordsPath(parents, parent.id, { permanent: true }), alice.token)).status).toBe(200)
    // The cascade applies (like a foreign key's ON DELETE CASCADE): bob's child is gone, the link cleared.
    expect(
      (
        await server.request('GET', recordsPath(children, child.id, { include_deleted: 'true' }), {
          token: owner.token,
        })
      ).status,
    ).toBe(404)
    expect(
      (await server.request('GET', recordsPath(links, link.id), { token: owner.token })).body.data.parent,
    ).toBeNull()
    // But bob's file stays, since alice could not delete it herself.
    await settle()
    await expectKept(theirs, bob, children)

    const alicesActs = { id: alice.id, kind: 'user' }
    const caused = events.slice(from)
    const childDelete = caused.find((e) => e.type === 'record.delete' && e.event.before?.id === child.id)
    expect(childDelete?.event).toMatchObject({ collection: children, permanent: true, principal: alicesActs })
    expect(actingPrincipalOf(childDelete!.event)?.userId).toBe(alice.id)
    const linkUpdate = caused.find((e) => e.type === 'record.update' && e.event.after?.id === link.id)
    expect(linkUpdate?.event).toMatchObject({ collection: links, principal: alicesActs, after: { parent: null } })
  })

  it("a cascade takes the child's file when the one deleting could delete it: one's own, or anyone's for an administrator", async () => {
    const parent = await createRecord(server, alice.token, parents, { name: 'shared parent' })
    const own = await fileOf(alice, children)
    const theirs = await fileOf(bob, children, 'private')
    await createRecord(server, alice.token, children, { name: "alice's child", parent: parent.id, attachment: own.id })
    await createRecord(server, bob.token, children, { name: "bob's child", parent: parent.id, attachment: theirs.id })
    expect((await del(recordsPath(parents, parent.id, { permanent: true }), alice.token)).status).toBe(200)
    await expectGone(own.id)
    await expectKept(theirs, bob, children)

    const adminsParent = await createRecord(server, alice.token, parents, { name: 'for the owner' })
    await createRecord(server, bob.token, children, {
      name: 'bob again',
      parent: adminsParent.id,
      attachment: theirs.id,
    })
    expect((await del(recordsPath(parents, adminsParent.id, { permanent: true }), owner.token)).status).toBe(200)
    await expectGone(theirs.id)
  })
})

describe('collection delete and truncate', () => {
  it("a collection's delete takes only the attached files its deleter could delete; the others stay, attached to __system", async () => {
    const scrap = await createCollection(server, owner.token, 'rf_scrap', [fileField])
    const mine = await fileOf(keeper, scrap)
    const theirs = await fileOf(bob, scrap, 'private')
    const reply = await server.request('DELETE', `/api/v1/collections/${scrap}`, { token: keeper.token })
    expect(reply.status, reply.text).toBe(200)
    // Settled before the answer.
    expect((await server.request('GET', `${FILES}/${mine.id}`, { token: owner.token })).status).toBe(404)
    await expectKept(theirs, bob, '__system')
  })

  it('a file a record of another collection still holds survives its collection, even for an administrator', async () => {
    const scrap = await createCollection(server, owner.token, 'rf_scrap2', [fileField])
    const held = await fileOf(alice, scrap)
    const loose = await fileOf(alice, scrap)
    await createRecord(server, alice.token, docs, { title: 'holds a scrap file', attachment: held.id })
    expect((await server.request('DELETE', `/api/v1/collections/${scrap}`, { token: owner.token })).status).toBe(200)
    expect((await server.request('GET', `${FILES}/${loose.id}`, { token: owner.token })).status).toBe(404)
    await expectKept(held, alice, '__system')
  })

  it('truncate removes the records and keeps every file (core-api: truncate keeps files)', async () => {
    const trunc = await createCollection(server, owner.token, 'rf_trunc', [fileField])
    const theirs = await fileOf(bob, trunc, 'public')
    const own = await fileOf(alice, trunc)
    await createRecord(server, alice.token, trunc, { attachment: theirs.id })
    await createRecord(server, alice.token, trunc, { attachment: own.id })
    const reply = await server.request('POST', `/api/v1/collections/${trunc}/truncate`, { token: owner.token })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.deleted).toBe(2)
    await settle()
    await expectKept(theirs, bob, trunc)
    await expectKept(own, alice, trunc)
  })
})
