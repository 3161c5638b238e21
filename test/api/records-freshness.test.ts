import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Reply, TestServer } from '../support/harness.js'
import { startServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { client, createCollection, createRecord, freshName, recordsPath } from './records-fixtures.js'

// Cached page-mode totals and weak ETags (docs/records.md § Totals and ETags, decision 025). Totals are read
// with limit=1, so a full page asks for a count (a short page is counted without the cache): each check
// first reads the total (caching it), then writes, then reads again. The same for ETags: the tag held from
// before a write must not be answered 304 after it.

let server: TestServer
let owner: Account
const { get, post, patch, del } = client(() => server)

beforeAll(async () => {
  server = await startServer({ CORS_ORIGINS: 'https://app.example' })
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
})

let roleSeq = 0
async function personWith(grants: unknown[]): Promise<Account & { roleId: string }> {
  const name = `fresh_role_${roleSeq++}`
  const role = await post('/api/v1/roles', owner.token, { name })
  expect(role.status, role.text).toBe(201)
  await putGrants(role.body.data.id, grants)
  return { ...(await createAccount(server, owner.token, { role: name })), roleId: role.body.data.id }
}
async function putGrants(roleId: string, grants: unknown[]): Promise<void> {
  const put = await server.request('PUT', `/api/v1/roles/${roleId}/grants`, { token: owner.token, body: { grants } })
  expect(put.status, put.text).toBe(200)
}

const published = JSON.stringify({ status: { _eq: 'published' } })

/** The page-mode total (limit 1, so a count runs whenever a record matches). */
async function total(collection: string, token = owner.token, query: Record<string, string> = {}): Promise<number> {
  const reply = await get(recordsPath(collection, undefined, { limit: 1, ...query }), token)
  expect(reply.status, reply.text).toBe(200)
  return reply.body.total
}

/** Both totals the count checks follow: every record, and the published ones. */
const totals = async (collection: string, token = owner.token) => [
  await total(collection, token),
  await total(collection, token, { filter: published }),
]

const listPath = (collection: string) => recordsPath(collection, undefined, { limit: 1, filter: published })

/** A read's ETag (asserting it is weak and private). */
async function tagOf(path: string, token = owner.token): Promise<string> {
  const reply = await get(path, token)
  expect(reply.status, reply.text).toBe(200)
  const etag = reply.headers.get('etag')
  expect(etag).toMatch(/^W\/"[\w-]+"$/)
  expect(reply.headers.get('cache-control')).toBe('private, no-cache')
  return etag!
}

const conditional = (path: string, tags: string, token = owner.token) => get(path, token, { 'If-None-Match': tags })

function expectNotModified(reply: Reply, etag: string): void {
  expect(reply.status, reply.text).toBe(304)
  expect(reply.text).toBe('')
  expect(reply.headers.get('etag')).toBe(etag)
}

/** Asserts the tag held from before a write is no longer current: a full 200 with a new tag. */
async function expectChanged(path: string, held: string, token = owner.token): Promise<string> {
  const reply = await conditional(path, held, token)
  expect(reply.status, reply.text).toBe(200)
  const fresh = reply.headers.get('etag')
  expect(fresh).not.toBe(held)
  return fresh!
}

const fields = [
  { name: 'title', type: 'text', required: true },
  { name: 'status', type: 'text', required: false },
]

async function seeded(): Promise<{ name: string; ids: string[] }> {
  const name = await createCollection(server, owner.token, freshName('fresh'), fields)
  const ids: string[] = []
  for (const status of ['published', 'published', 'published', 'draft'])
    ids.push((await createRecord(server, owner.token, name, { title: status, status })).id)
  return { name, ids }
}

describe('page-mode totals are exact after every kind of write', () => {
  it('create, update across the filter, delete, restore, bulk delete, import, truncate', async () => {
    const { name, ids } = await seeded()
    const draft = ids[3]!
    const steps: [label: string, write: () => Promise<Reply>, expected: [number, number]][] = [
      ['create', () => post(recordsPath(name), owner.token, { title: 'new', status: 'published' }), [5, 4]],
      ['update into the filter', () => patch(recordsPath(name, draft), owner.token, { status: 'published' }), [5, 5]],
      ['update out of the filter', () => patch(recordsPath(name, ids[0]!), owner.token, { status: 'draft' }), [5, 4]],
      ['soft delete', () => del(recordsPath(name, ids[1]!), owner.token), [4, 3]],
      ['restore', () => post(`${recordsPath(name, ids[1]!)}/restore`, owner.token), [5, 4]],
      ['permanent delete', () => del(`${recordsPath(name, ids[1]!)}?permanent=true`, owner.token), [4, 3]],
      [
        'bulk delete',
        () =>
          server.request('DELETE', `${recordsPath(name)}/bulk`, {
            token: owner.token,
            body: { ids: [ids[2]!, draft] },
          }),
        [2, 1],
      ],
      [
        'import',
        () =>
          server.request('POST', `${recordsPath(name)}/import-ndjson`, {
            token: owner.token,
            rawBody: ['a', 'b', 'c'].map((title) => JSON.stringify({ title, status: 'published' })).join('\n'),
            headers: { 'content-type': 'application/x-ndjson' },
          }),
        [5, 4],
      ],
      ['truncate', () => post(`/api/v1/collections/${name}/truncate`, owner.token), [0, 0]],
    ]
    let before = await totals(name)
    expect(before).toEqual([4, 3])
    for (const [label, write, expected] of steps) {
      const listTag = await tagOf(listPath(name))
      expect(await totals(name), `cached before ${label}`).toEqual(before)
      const reply = await write()
      expect(reply.status, `${label}: ${reply.text}`).toBeLessThan(300)
      expect(await totals(name), `after ${label}`).toEqual(expected)
      await expectChanged(listPath(name), listTag)
      before = expected
    }
  })

  it("a transfer moves the record from one owner's total to the other's (private collection)", async () => {
    const crud = ['read', 'create', 'update', 'delete'].map((action) => ({ resource: 'collections/*', action }))
    const alice = await personWith(crud)
    const bob = await personWith(crud)
    const name = await createCollection(server, owner.token, freshName('fresh_private'), fields, {
      accessControl: { preset: 'private' },
    })
    const record = await createRecord(server, alice.token, name, { title: 'mine' })
    await createRecord(server, alice.token, name, { title: 'also mine' })
    await createRecord(server, bob.token, name, { title: 'his' })
    expect([await total(name, alice.token), await total(name, bob.token)]).toEqual([2, 1])
    const aliceTag = await tagOf(listPath(name), alice.token)

    const moved = await post(`${recordsPath(name, record.id)}/transfer`, alice.token, { userId: bob.id })
    expect(moved.status, moved.text).toBe(200)
    expect([await total(name, alice.token), await total(name, bob.token)]).toEqual([1, 2])
    await expectChanged(listPath(name), aliceTag, alice.token)
  })

  it("a permanent delete that cascades into another collection moves that collection's total", async () => {
    const parents = await createCollection(server, owner.token, freshName('fresh_parent'), [
      { name: 'title', type: 'text', required: true },
    ])
    const children = await createCollection(server, owner.token, freshName('fresh_child'), [
      { name: 'title', type: 'text', required: true },
      {
        name: 'parent',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: parents, relationType: 'belongsTo', onDelete: 'cascade' },
      },
    ])
    const parent = await createRecord(server, owner.token, parents, { title: 'p' })
    for (const title of ['a', 'b']) await createRecord(server, owner.token, children, { title, parent: parent.id })
    await createRecord(server, owner.token, children, { title: 'orphan' })
    expect(await total(children)).toBe(3)
    const childTag = await tagOf(recordsPath(children, undefined, { limit: 1 }))

    const gone = await del(`${recordsPath(parents, parent.id)}?permanent=true`, owner.token)
    expect(gone.status, gone.text).toBe(200)
    expect(await total(children)).toBe(1)
    await expectChanged(recordsPath(children, undefined, { limit: 1 }), childTag)
  })
})

describe('callers with different scopes get their own totals and tags', () => {
  let name: string
  let narrow: Account & { roleId: string }
  let wide: Account & { roleId: string }

  beforeAll(async () => {
    ;({ name } = await seeded())
    narrow = await personWith([
      { resource: `collections/${name}`, action: 'read', item_filter: { status: { _eq: 'published' } } },
    ])
    wide = await personWith([{ resource: `collections/${name}`, action: 'read' }])
  })

  it("the same request counts each caller's rows, in either order, cached or not", async () => {
    for (let round = 0; round < 2; round++) {
      expect(await total(name, narrow.token)).toBe(3)
      expect(await total(name, wide.token)).toBe(4)
      expect(await total(name, owner.token)).toBe(4)
    }
  })

  it('a tag of one caller is not current for a caller who sees other rows', async () => {
    const path = recordsPath(name, undefined, { limit: 1 })
    const wideTag = await tagOf(path, wide.token)
    expectNotModified(await conditional(path, wideTag, wide.token), wideTag)
    const other = await conditional(path, wideTag, narrow.token)
    expect(other.status, other.text).toBe(200)
    expect(other.body.total).toBe(3)
  })

  it('a grant change moves the total and the tag at once', async () => {
    const path = recordsPath(name, undefined, { limit: 1 })
    expect(await total(name, narrow.token)).toBe(3)
    const held = await tagOf(path, narrow.token)
    await putGrants(narrow.roleId, [
      { resource: `collections/${name}`, action: 'read', item_filter: { status: { _eq: 'draft' } } },
    ])
    expect(await total(name, narrow.token)).toBe(1)
    await expectChanged(path, held, narrow.token)
    // A field allowlist changes what the caller sees too, rows unchanged.
    const again = await tagOf(path, narrow.token)
    await putGrants(narrow.roleId, [
      { resource: `collections/${name}`, action: 'read', item_filter: { status: { _eq: 'draft' } }, fields: ['title'] },
    ])
    await expectChanged(path, again, narrow.token)
  })
})

describe('ETags and If-None-Match', () => {
  let name: string
  let ids: string[]
  beforeAll(async () => {
    ;({ name, ids } = await seeded())
  })

  it('a list answers a weak ETag; the same tag back is 304 with no body, also in a list of tags or as *', async () => {
    const path = listPath(name)
    const etag = await tagOf(path)
    expect(await tagOf(path)).toBe(etag)
    expectNotModified(await conditional(path, etag), etag)
    expectNotModified(await conditional(path, `W/"stale", ${etag}`), etag)
    expectNotModified(await conditional(path, etag.slice(2)), etag) // weak comparison: the strong form matches too
    expectNotModified(await conditional(path, '*'), etag)
  })

  it('a stale or foreign tag gets the full answer', async () => {
    const path = listPath(name)
    for (const tags of ['W/"stale"', '"nothing"', '']) {
      const reply = await conditional(path, tags)
      expect(reply.status, tags).toBe(200)
      expect(reply.body.total).toBe(3)
    }
  })

  it('each part of the request is part of the tag: page, sort, fields, locale, cursor, filter, search', async () => {
    const base = { limit: 1 }
    const variants: Record<string, string | number>[] = [
      {},
      { page: 2 },
      { sortBy: 'title' },
      { fields: 'title' },
      { locale: 'fr' },
      { cursor: '' },
      { filter: published },
      { search: 'draft' },
      { include_deleted: 'true' },
    ]
    const tags = new Set<string>()
    for (const extra of variants) tags.add(await tagOf(recordsPath(name, undefined, { ...base, ...extra })))
    expect(tags.size).toBe(variants.length)
  })

  it('a record answers a weak ETag and 304; a write to the collection makes it stale; * on a missing record is 404', async () => {
    const path = recordsPath(name, ids[0]!)
    const etag = await tagOf(path)
    expectNotModified(await conditional(path, etag), etag)
    expectNotModified(await conditional(path, '*'), etag)
    const updated = await patch(path, owner.token, { title: 'changed' })
    expect(updated.status, updated.text).toBe(200)
    const fresh = await expectChanged(path, etag)
    expect((await get(path, owner.token)).body.data.title).toBe('changed')
    expectNotModified(await conditional(path, fresh), fresh)

    const missing = await conditional(recordsPath(name, 'f'.repeat(32)), '*')
    expect(missing.status, missing.text).toBe(404)
  })

  it('a tag is not honoured on writes: a PATCH with If-None-Match writes and answers 200', async () => {
    const path = recordsPath(name, ids[1]!)
    const etag = await tagOf(path)
    const reply = await server.request('PATCH', path, {
      token: owner.token,
      body: { title: 'patched' },
      headers: { 'If-None-Match': etag },
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.title).toBe('patched')
  })

  it('an answer that draws on other collections (expand) carries no ETag; without expand it does', async () => {
    const linked = await createCollection(server, owner.token, freshName('fresh_linked'), [
      { name: 'title', type: 'text', required: true },
      {
        name: 'item',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: name, relationType: 'belongsTo', onDelete: 'set-null' },
      },
    ])
    const link = await createRecord(server, owner.token, linked, { title: 'l', item: ids[2] })
    for (const path of [
      recordsPath(linked, undefined, { expand: 'item' }),
      recordsPath(linked, link.id, { expand: 'item' }),
    ]) {
      const reply = await get(path, owner.token)
      expect(reply.status, reply.text).toBe(200)
      expect(reply.headers.get('etag')).toBeNull()
    }
    await tagOf(recordsPath(linked, link.id))
  })

  it('a browser app on another origin may send If-None-Match and read the ETag (CORS)', async () => {
    const preflight = await server.request('OPTIONS', listPath(name), {
      headers: {
        Origin: 'https://app.example',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'if-none-match',
      },
    })
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('if-none-match')
    const reply = await get(listPath(name), owner.token, { Origin: 'https://app.example' })
    expect(reply.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('etag')
  })
})
