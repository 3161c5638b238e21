import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import {
  client,
  createCollection,
  createRecord,
  expectError,
  listAll,
  readRecord,
  recordsPath,
} from './records-fixtures.js'

// Relation values must name records that exist (and are not soft-deleted) in the target collection: every
// write path refuses the others with 422 validation_error, details { field, missing }.

let server: TestServer
let owner: Account
/** May write posts, and may not read people at all. */
let writer: Account
const { post, patch, del } = client(() => server)
const people = 'rel_people'
const posts = 'rel_posts'
const ghost = 'nonexistent0000000000000000000000'
let ada: string
let bob: string

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  await createCollection(server, owner.token, people, [{ name: 'name', type: 'text', required: true }])
  await createCollection(server, owner.token, posts, [
    { name: 'title', type: 'text', required: false },
    {
      name: 'author',
      type: 'relation',
      required: false,
      relationConfig: { targetCollection: people, relationType: 'belongsTo', onDelete: 'set-null' },
    },
    {
      name: 'readers',
      type: 'relation',
      required: false,
      relationConfig: { targetCollection: people, relationType: 'hasMany', onDelete: 'set-null' },
    },
    {
      name: 'parent',
      type: 'relation',
      required: false,
      relationConfig: { targetCollection: posts, relationType: 'belongsTo', onDelete: 'set-null' },
    },
  ])
  ada = (await createRecord(server, owner.token, people, { name: 'Ada' })).id
  bob = (await createRecord(server, owner.token, people, { name: 'Bob' })).id

  const role = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name: 'post_writer' } })
  expect(role.status, role.text).toBe(201)
  const grants = ['read', 'create', 'update'].map((action) => ({ resource: `collections/${posts}`, action }))
  const put = await server.request('PUT', `/api/v1/roles/${role.body.data.id}/grants`, {
    token: owner.token,
    body: { grants },
  })
  expect(put.status, put.text).toBe(200)
  writer = await createAccount(server, owner.token, { role: 'post_writer' })
})
afterAll(async () => {
  await server?.stop()
})

/** A person soft-deleted after creation. */
async function deletedPerson(): Promise<string> {
  const person = await createRecord(server, owner.token, people, { name: 'Gone' })
  expect((await del(recordsPath(people, person.id), owner.token)).status).toBe(200)
  return person.id
}

const titles = async () => (await listAll(server, owner.token, posts)).map((r) => r.title as string)

function expectMissing(reply: Awaited<ReturnType<typeof post>>, field: string, missing: string[]): void {
  expectError(reply, 422, 'validation_error')
  expect(reply.body.details).toEqual({ field, missing })
}

describe('create', () => {
  it('a belongsTo id that names no record is 422 and nothing is stored (was 201 with a dangling id)', async () => {
    const reply = await post(recordsPath(posts), owner.token, { title: 'dangling', author: ghost })
    expectMissing(reply, 'author', [ghost])
    expect(reply.body.message).toContain(people)
    expect(await titles()).not.toContain('dangling')
  })

  it('a hasMany list is refused naming only its missing ids', async () => {
    const reply = await post(recordsPath(posts), owner.token, {
      title: 'some missing',
      readers: [ada, 'missing1', bob, 'missing2'],
    })
    expectMissing(reply, 'readers', ['missing1', 'missing2'])
    expect(await titles()).not.toContain('some missing')
  })

  it('a soft-deleted target counts as missing', async () => {
    const gone = await deletedPerson()
    expectMissing(await post(recordsPath(posts), owner.token, { title: 'to the deleted', author: gone }), 'author', [
      gone,
    ])
    expectMissing(
      await post(recordsPath(posts), owner.token, { title: 'to the deleted', readers: [ada, gone] }),
      'readers',
      [gone],
    )
  })

  it('existing ids are stored', async () => {
    const created = await createRecord(server, owner.token, posts, {
      title: 'linked',
      author: ada,
      readers: [ada, bob],
      parent: null,
    })
    expect(created).toMatchObject({ author: ada, readers: [ada, bob], parent: null })
    const expanded = await readRecord(server, owner.token, posts, created.id, { expand: 'author' })
    expect(expanded.author).toMatchObject({ id: ada, name: 'Ada' })
  })

  it('the list of missing ids is capped at 20; missingCount tells how many there are', async () => {
    const many = Array.from({ length: 30 }, (_, i) => `nobody${i}`)
    const reply = await post(recordsPath(posts), owner.token, { title: 'thirty', readers: many })
    expectError(reply, 422, 'validation_error')
    expect(reply.body.details).toEqual({ field: 'readers', missing: many.slice(0, 20), missingCount: 30 })
  })

  it('a relation to the own collection may name the record being created (an administrator chooses the id)', async () => {
    const created = await createRecord(server, owner.token, posts, {
      id: 'selfref1',
      title: 'loop',
      parent: 'selfref1',
    })
    expect(created.parent).toBe('selfref1')
    expectMissing(
      await post(recordsPath(posts), owner.token, { id: 'selfref2', title: 'other', parent: 'selfref3' }),
      'parent',
      ['selfref3'],
    )
  })

  it('is checked whatever the caller may read in the target: existing ids pass, missing ones are refused', async () => {
    // The writer may not read people at all, and still links to Ada (PocketBase does the same).
    expect((await server.request('GET', recordsPath(people, ada), { token: writer.token })).status).toBe(403)
    const created = await post(recordsPath(posts), writer.token, { title: 'by the writer', author: ada })
    expect(created.status, created.text).toBe(201)
    expectMissing(
      await post(recordsPath(posts), writer.token, { title: 'by the writer, dangling', author: ghost }),
      'author',
      [ghost],
    )
  })
})

describe('update', () => {
  it('a missing id is 422 and the record does not change; an existing one is written', async () => {
    const record = await createRecord(server, owner.token, posts, { title: 'to update', author: ada })
    expectMissing(
      await patch(recordsPath(posts, record.id), owner.token, { title: 'changed', author: ghost }),
      'author',
      [ghost],
    )
    expectMissing(await patch(recordsPath(posts, record.id), owner.token, { readers: [bob, ghost] }), 'readers', [
      ghost,
    ])
    expect(await readRecord(server, owner.token, posts, record.id)).toEqual(record)
    const ok = await patch(recordsPath(posts, record.id), owner.token, { author: bob, readers: [ada] })
    expect(ok.status, ok.text).toBe(200)
    expect(ok.body).toMatchObject({ author: bob, readers: [ada], _version: 2 })
  })

  it('only the ids an update adds are checked: a reference whose target was deleted since does not block other changes', async () => {
    const gone = await createRecord(server, owner.token, people, { name: 'Soon gone' })
    const record = await createRecord(server, owner.token, posts, {
      title: 'old links',
      author: gone.id,
      readers: [gone.id],
    })
    expect((await del(recordsPath(people, gone.id), owner.token)).status).toBe(200)
    // Untouched, resent as is, or kept in a list that grows: fine.
    expect((await patch(recordsPath(posts, record.id), owner.token, { title: 'renamed' })).status).toBe(200)
    expect((await patch(recordsPath(posts, record.id), owner.token, { author: gone.id })).status).toBe(200)
    const grown = await patch(recordsPath(posts, record.id), owner.token, { readers: [gone.id, ada] })
    expect(grown.status, grown.text).toBe(200)
    expect(grown.body.readers).toEqual([gone.id, ada])
    // Adding it back elsewhere is adding a missing id.
    expectMissing(await patch(recordsPath(posts, record.id), owner.token, { parent: gone.id }), 'parent', [gone.id])
  })

  it('is checked whatever the caller may read in the target', async () => {
    const record = await createRecord(server, writer.token, posts, { title: 'writer update' })
    expect((await patch(recordsPath(posts, record.id), writer.token, { author: bob })).status).toBe(200)
    expectMissing(await patch(recordsPath(posts, record.id), writer.token, { author: ghost }), 'author', [ghost])
  })
})

describe('import', () => {
  const importPath = (query = '') => `${recordsPath(posts)}/import-ndjson${query}`
  const ndjson = (...lines: unknown[]) => lines.map((l) => JSON.stringify(l)).join('\n')
  const send = (body: string, query = '') =>
    server.request('POST', importPath(query), {
      token: owner.token,
      rawBody: body,
      headers: { 'content-type': 'application/x-ndjson' },
    })

  it('lines naming missing records are refused as a create would be; the others are imported', async () => {
    const gone = await deletedPerson()
    const body = ndjson(
      { title: 'import ok', author: ada, readers: [bob] },
      { title: 'import dangling', author: ghost },
      { title: 'import deleted', readers: [ada, gone] },
      { title: 'import ok 2', author: bob },
    )
    const reply = await send(body)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({ imported: 2, failed: 2, total: 4 })
    expect(reply.body.errors).toEqual([
      { line: 2, code: 'validation_error', message: expect.stringContaining(people), field: 'author' },
      { line: 3, code: 'validation_error', message: expect.stringContaining(people), field: 'readers' },
    ])
    const stored = await titles()
    expect(stored).toEqual(expect.arrayContaining(['import ok', 'import ok 2']))
    expect(stored).not.toContain('import dangling')
    expect(stored).not.toContain('import deleted')
  })

  it('a dry run reports the same refusals', async () => {
    const reply = await send(ndjson({ title: 'dry', author: ghost }, { title: 'dry ok', author: ada }), '?dryRun=true')
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({
      imported: 1,
      failed: 1,
      errors: [{ line: 1, code: 'validation_error', field: 'author' }],
    })
  })
})
