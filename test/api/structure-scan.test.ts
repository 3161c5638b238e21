import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, setGrants, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'
import { client, createCollection, createRecord, expectError, freshName, recordsPath } from './records-fixtures.js'
import { placeShape, scanAll, structurePath } from './structure-support.js'

let server: TestServer
let owner: Account
let editor: Account
const { get, del } = client(() => server)

const places = 'places'
const placeFields = [
  { name: 'title', type: 'text', required: false },
  { name: 'status', type: 'enum', required: false, enumValues: ['open', 'closed'] },
  { name: 'tags', type: 'multi_enum', required: false, enumValues: ['a', 'b', 'c'] },
  { name: 'meta', type: 'json', required: false, structure: { enforcement: 'warn', shape: placeShape } },
  { name: 'plain', type: 'json', required: false },
]
const ids: Record<string, string> = {}

/** Sets a column behind the API's back, as legacy or imported data would be. */
async function setColumn(collection: string, id: string, column: string, value: unknown): Promise<void> {
  const handle = await server.app.registry.get(server.app.defaultProject.id)
  const stored = typeof value === 'string' || value === null ? value : JSON.stringify(value)
  await handle.db
    .updateTable(collection)
    .set({ [column]: stored })
    .where('id', '=', id)
    .execute()
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  editor = await createAccount(server, owner.token, { role: 'editor' })
  await createCollection(server, owner.token, places, placeFields)
  const add = async (key: string, body: Record<string, unknown>) => {
    ids[key] = (await createRecord(server, owner.token, places, { title: key, ...body })).id
  }
  await add('valid', {
    status: 'open',
    tags: ['a'],
    meta: { biome: ['Forest', 'Desert'], size: 2, kind: 'city', scores: { red: 1 } },
  })
  await add('empty', {})
  // Warn accepts all of these; the scan finds them.
  await add('typo', { meta: { biome: ['Fores', 'Desert', 'Fores'], size: 3 } })
  await add('keys', { meta: { Biome: ['Forest'], kind: 'City' } })
  await add('type', { meta: { size: 'big', biome: 'Forest' } })
  await add('mapkey', { meta: { scores: { red: 1, gren: 2 } } })
  await add('deleted', { meta: { biome: ['Fores'] } })
  expect((await del(recordsPath(places, ids.deleted), owner.token)).status).toBe(200)
})
afterAll(async () => {
  await server?.stop()
})

const scanPath = (field: string, query = '') => `${structurePath(places, field, 'scan')}${query}`

describe('GET …/fields/:field/scan', () => {
  it('reports each problem once per record, grouped by code, path and value, with suggestions', async () => {
    const reply = await get(scanPath('meta'), owner.token)
    expect(reply.status, reply.text).toBe(200)
    const page = reply.body.data
    // Only the rows that might be wrong are read: the narrowing predicate leaves out the valid and empty ones.
    expect(page.estimate).toEqual({ total: 6, upperBound: 4, narrowed: true })
    expect(page.checked).toBe(4)
    expect(page.invalid).toBe(4)
    expect(page.nextCursor).toBeNull()
    const byPath = Object.fromEntries(page.groups.map((g: any) => [`${g.code} ${g.path} ${g.from ?? g.detail}`, g]))
    expect(byPath['enum biome[] Fores']).toEqual({
      code: 'enum',
      path: 'biome[]',
      detail: expect.stringContaining('"Fores" is not an allowed value'),
      count: 1,
      suggestion: 'Forest',
      sampleIds: [ids.typo],
      from: 'Fores',
    })
    expect(byPath['unknown-key $ Biome']).toMatchObject({ count: 1, suggestion: 'biome', sampleIds: [ids.keys] })
    expect(byPath['enum kind City']).toMatchObject({ suggestion: 'city', from: 'City' })
    expect(byPath['key scores{key} gren']).toMatchObject({ suggestion: 'green', sampleIds: [ids.mapkey] })
    const types = page.groups.filter((g: any) => g.code === 'type')
    expect(types.map((g: any) => g.path).sort()).toEqual(['biome', 'size'])
    for (const group of types) {
      expect(group.suggestion).toBeNull()
      expect(group).not.toHaveProperty('from')
    }
    // The soft-deleted record is skipped.
    expect(JSON.stringify(page.groups)).not.toContain(ids.deleted)
  })

  it('follows nextCursor batch by batch; the estimate comes with the first batch only', async () => {
    const pages = await scanAll(server, owner.token, places, 'meta', 1)
    expect(pages.length).toBeGreaterThanOrEqual(4)
    expect(pages[0]!.body.data.estimate).toMatchObject({ total: 6 })
    for (const page of pages.slice(1)) expect(page.body.data).not.toHaveProperty('estimate')
    expect(pages.reduce((sum, p) => sum + p.body.data.checked, 0)).toBe(4)
    expect(pages.reduce((sum, p) => sum + p.body.data.invalid, 0)).toBe(4)
    const sampled = pages.flatMap((p) => p.body.data.groups.flatMap((g: any) => g.sampleIds))
    expect(new Set(sampled)).toEqual(new Set([ids.typo, ids.keys, ids.type, ids.mapkey]))
  })

  it('an enum column: a predicate reads only values outside enumValues (written behind the API’s back)', async () => {
    const clean = await get(scanPath('status'), owner.token)
    expect(clean.body.data).toMatchObject({
      checked: 0,
      invalid: 0,
      nextCursor: null,
      groups: [],
      estimate: { total: 6, upperBound: 0, narrowed: true },
    })
    const name = await createCollection(server, owner.token, freshName('legacy'), [
      { name: 'status', type: 'enum', required: false, enumValues: ['open', 'closed'] },
      { name: 'tags', type: 'multi_enum', required: false, enumValues: ['alpha', 'beta'] },
    ])
    const a = await createRecord(server, owner.token, name, { status: 'open', tags: ['alpha'] })
    const b = await createRecord(server, owner.token, name, { status: 'closed' })
    await setColumn(name, a.id, 'status', ' Open')
    await setColumn(name, b.id, 'tags', ['alpha', 'Beta', 7])
    const status = (await get(structurePath(name, 'status', 'scan'), owner.token)).body.data
    expect(status).toMatchObject({ checked: 1, invalid: 1, estimate: { total: 2, upperBound: 1, narrowed: true } })
    expect(status.groups).toEqual([
      {
        code: 'enum',
        path: '$',
        detail: expect.any(String),
        count: 1,
        suggestion: 'open',
        sampleIds: [a.id],
        from: ' Open',
      },
    ])
    const tags = (await get(structurePath(name, 'tags', 'scan'), owner.token)).body.data
    expect(tags).toMatchObject({ checked: 1, invalid: 1 })
    expect(tags.groups).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'enum', path: '$', suggestion: 'beta', from: 'Beta', sampleIds: [b.id] }),
        expect.objectContaining({ code: 'type', path: '$', suggestion: null, sampleIds: [b.id] }),
      ]),
    )
  })

  it('a clean json field reads no row at all', async () => {
    const name = await createCollection(server, owner.token, freshName('clean'), [
      { name: 'meta', type: 'json', required: false, structure: { enforcement: 'strict', shape: placeShape } },
    ])
    await createRecord(server, owner.token, name, {
      meta: { biome: ['Tundra'], kind: 'village', scores: { green: 2 } },
    })
    await createRecord(server, owner.token, name, { meta: { size: 1 } })
    const page = (await get(structurePath(name, 'meta', 'scan'), owner.token)).body.data
    expect(page).toEqual({
      checked: 0,
      invalid: 0,
      nextCursor: null,
      estimate: { total: 2, upperBound: 0, narrowed: true },
      groups: [],
    })
  })

  it('a value of the wrong JSON type is read and reported at $ (and, on SQLite, text that is not JSON at all)', async () => {
    const name = await createCollection(server, owner.token, freshName('broken'), [
      {
        name: 'meta',
        type: 'json',
        required: false,
        structure: { enforcement: 'warn', shape: { type: 'list', items: { type: 'string' } } },
      },
    ])
    const good = await createRecord(server, owner.token, name, { meta: ['x'] })
    const bad = await createRecord(server, owner.token, name, { meta: { not: 'a list' } })
    const wrongIds = [bad.id]
    // PostgreSQL's jsonb cannot hold text that is not JSON; SQLite's TEXT column can, when written behind the API.
    if (server.app.registry.kind === 'sqlite') {
      const raw = await createRecord(server, owner.token, name, { meta: ['y'] })
      await setColumn(name, raw.id, 'meta', '{not json')
      wrongIds.push(raw.id)
    }
    const page = (await get(structurePath(name, 'meta', 'scan'), owner.token)).body.data
    expect(page).toMatchObject({
      checked: wrongIds.length,
      invalid: wrongIds.length,
      estimate: { upperBound: wrongIds.length },
    })
    // One group per kind of wrong value (an object; the unparsable text reads as a string).
    for (const group of page.groups) expect(group).toMatchObject({ code: 'type', path: '$', suggestion: null })
    expect(page.groups.flatMap((g: any) => g.sampleIds).sort()).toEqual(wrongIds.sort())
    expect(JSON.stringify(page)).not.toContain(good.id)
  })

  it('batches are capped by bytes: a short batch with a cursor is not the end', async () => {
    const name = await createCollection(server, owner.token, freshName('big'), [
      {
        name: 'meta',
        type: 'json',
        required: false,
        structure: { enforcement: 'warn', shape: { type: 'object', entries: { size: { type: 'number' } } } },
      },
    ])
    for (let i = 0; i < 3; i++) await createRecord(server, owner.token, name, { meta: { size: 'x'.repeat(900_000) } })
    const pages = await scanAll(server, owner.token, name, 'meta', 1000)
    expect(pages.map((p) => p.body.data.checked)).toEqual([2, 1])
    expect(pages[0]!.body.data.nextCursor).not.toBeNull()
    expect(pages.map((p) => p.body.data.invalid)).toEqual([2, 1])
  })

  it('a cursor from before a structure change is refused (409); a made-up one is 400', async () => {
    const name = await createCollection(server, owner.token, freshName('moving'), [
      {
        name: 'meta',
        type: 'json',
        required: false,
        structure: { enforcement: 'warn', shape: { type: 'enum', values: ['a'] } },
      },
    ])
    await createRecord(server, owner.token, name, { meta: 'b' })
    await createRecord(server, owner.token, name, { meta: 'c' })
    const first = (await get(`${structurePath(name, 'meta', 'scan')}?limit=1`, owner.token)).body.data
    expect(first.nextCursor).toEqual(expect.any(String))
    const patched = await server.request('PATCH', `/api/v1/collections/${name}`, {
      token: owner.token,
      body: {
        fields: [
          {
            name: 'meta',
            type: 'json',
            required: false,
            structure: { enforcement: 'warn', shape: { type: 'enum', values: ['a', 'b'] } },
          },
        ],
      },
    })
    expect(patched.status, patched.text).toBe(200)
    expectError(
      await get(`${structurePath(name, 'meta', 'scan')}?cursor=${encodeURIComponent(first.nextCursor)}`, owner.token),
      409,
      'conflict',
    )
    expectError(
      await get(`${structurePath(name, 'meta', 'scan')}?cursor=not-a-cursor`, owner.token),
      400,
      'invalid_request',
    )
  })
})

describe('a scan reads as the caller', () => {
  async function builderWith(grants: unknown[]): Promise<Account> {
    const created = await server.request('POST', '/api/v1/roles', {
      token: owner.token,
      body: { name: freshName('builder'), description: 'scans' },
    })
    expect(created.status, created.text).toBe(201)
    await setGrants(server, owner.token, created.body.data.name, [
      { resource: 'system/roles', action: 'read' },
      ...grants,
    ])
    return createAccount(server, owner.token, { role: created.body.data.name })
  }

  it('only the records of the caller’s read scope are counted and examined', async () => {
    const builder = await builderWith([
      { resource: `collections/${places}`, action: 'read', item_filter: { title: { _in: ['typo', 'valid'] } } },
    ])
    const page = (await get(scanPath('meta'), builder.token)).body.data
    expect(page).toMatchObject({ checked: 1, invalid: 1, estimate: { total: 2, upperBound: 1 } })
    expect(page.groups.flatMap((g: any) => g.sampleIds)).toEqual([ids.typo])
  })

  it('a field outside the caller’s read allowlist is 404 NOT_FOUND', async () => {
    const builder = await builderWith([
      { resource: `collections/${places}`, action: 'read', fields: ['title', 'status'] },
    ])
    expectError(await get(scanPath('meta'), builder.token), 404, 'NOT_FOUND')
    expect((await get(scanPath('status'), builder.token)).status).toBe(200)
  })

  it('a collection the caller may not read is 404 COLLECTION_NOT_FOUND; seeing only its schema is 403 FORBIDDEN', async () => {
    expectError(await get(scanPath('meta'), (await builderWith([])).token), 404, 'COLLECTION_NOT_FOUND')
    expectError(
      await get(scanPath('meta'), (await builderWith([{ resource: 'schema/*', action: 'read' }])).token),
      403,
      'FORBIDDEN',
    )
  })
})

describe('scan errors', () => {
  runScenarios(
    () => server,
    [
      {
        name: 'an editor lacks the builder grant',
        as: () => editor.token,
        method: 'GET',
        path: scanPath('meta'),
        status: 403,
        contains: { error: 'FORBIDDEN' },
      },
      { name: 'anonymous', method: 'GET', path: scanPath('meta'), status: 401, contains: { error: 'unauthorized' } },
      {
        name: 'no such collection',
        as: () => owner.token,
        method: 'GET',
        path: structurePath('nope', 'meta', 'scan'),
        status: 404,
        contains: { error: 'COLLECTION_NOT_FOUND' },
      },
      {
        name: 'no such field',
        as: () => owner.token,
        method: 'GET',
        path: scanPath('nope'),
        status: 404,
        contains: { error: 'NOT_FOUND' },
      },
      {
        name: 'a json field without structure',
        as: () => owner.token,
        method: 'GET',
        path: scanPath('plain'),
        status: 422,
        contains: { error: 'VALIDATION_ERROR' },
      },
      {
        name: 'a text field',
        as: () => owner.token,
        method: 'GET',
        path: scanPath('title'),
        status: 422,
        contains: { error: 'VALIDATION_ERROR' },
      },
      {
        name: 'limit 0',
        as: () => owner.token,
        method: 'GET',
        path: scanPath('meta', '?limit=0'),
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'limit over 1000',
        as: () => owner.token,
        method: 'GET',
        path: scanPath('meta', '?limit=1001'),
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'an editor learns nothing from a bad limit',
        as: () => editor.token,
        method: 'GET',
        path: scanPath('meta', '?limit=0'),
        status: 403,
        contains: { error: 'FORBIDDEN' },
      },
    ],
  )
})
