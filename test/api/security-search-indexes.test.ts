import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { accountWithGrants } from './collections-support.js'

/**
 * The security review of search-index queries (issue 25, deliver item 5), as attacks over real HTTP: FTS5
 * syntax smuggled through `q` (operators, column filters naming the file's own columns, unbalanced quotes,
 * control characters, very long text), and an index an administrator built, queried by narrow roles that
 * may not read some fields, some rows, a whole source collection, or anything of another project.
 */
const INDEXES = '/api/v1/search-indexes'
let server: TestServer
let owner: Account
/** Reads every doc, but only its title and team; may query indexes. */
let fieldsOnly: Account
/** Reads red docs only (every field); may query indexes. */
let redOnly: Account
/** Write and read diary entries (a private collection: their own only); may query indexes. */
let diarist: Account
let otherDiarist: Account

const request = (
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> => server.request(method, path, { token, body, headers })
const query = (name: string, q: string, token: string, headers?: Record<string, string>) =>
  request('GET', `${INDEXES}/${name}/query?${new URLSearchParams({ q, limit: '100' })}`, token, undefined, headers)
const ids: Record<string, string> = {}

async function record(
  collection: string,
  token: string,
  values: Record<string, unknown>,
  headers?: Record<string, string>,
): Promise<string> {
  const reply = await request('POST', `/api/v1/collections/${collection}/records`, token, values, headers)
  expect(reply.status, reply.text).toBe(201)
  return reply.body.id as string
}

/** Defines an index as the owner and builds it (waiting for the background build). */
async function built(name: string, sources: unknown[], headers?: Record<string, string>): Promise<void> {
  const created = await request('POST', INDEXES, owner.token, { name, sources }, headers)
  expect(created.status, created.text).toBe(201)
  expect((await request('POST', `${INDEXES}/${name}/rebuild`, owner.token, undefined, headers)).status).toBe(202)
  await server.app.services.searchIndexes.settled()
  const index = await request('GET', `${INDEXES}/${name}`, owner.token, undefined, headers)
  expect(index.body.data.status, index.text).toBe('ready')
}

/** The hits of a query that must answer 200, as `collection/id:field`. */
async function hits(name: string, q: string, token: string): Promise<string[]> {
  const reply = await query(name, q, token)
  expect(reply.status, `${JSON.stringify(q)}: ${reply.text}`).toBe(200)
  return (reply.body.data as { collection: string; id: string; field: string }[])
    .map((h) => `${h.collection}/${h.id}:${h.field}`)
    .sort()
}

/** Words only in fields, rows or collections the narrow roles may not read (whole words: a hex id may hold 4444). */
const hiddenWords = /\b(password|1111|2222|3333|northern|ropes|stripes|treasure|4444)\b/i

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const text = (name: string) => ({ name, type: 'text', required: false })
  for (const [name, fields, extra] of [
    ['docs', ['title', 'body', 'secret', 'team'], {}],
    ['vault', ['text'], {}],
    ['diary', ['text'], { accessControl: { preset: 'private' } }],
  ] as const) {
    const reply = await request('POST', '/api/v1/collections', owner.token, {
      name,
      fields: fields.map(text),
      ...extra,
    })
    expect(reply.status, reply.text).toBe(201)
  }
  ids.d1 = await record('docs', owner.token, {
    title: 'Aurora guide',
    body: 'northern lights',
    secret: 'alpha password 1111',
    team: 'red',
  })
  ids.d2 = await record('docs', owner.token, {
    title: 'Glacier zebra',
    body: 'ropes',
    secret: 'bravo password 2222',
    team: 'blue',
  })
  ids.d3 = await record('docs', owner.token, {
    title: 'Zebra crossing',
    body: 'stripes',
    secret: 'zebra password 3333',
    team: 'red',
  })
  ids.v1 = await record('vault', owner.token, { text: 'vault treasure 4444' })
  const search = { resource: 'system/search-indexes', action: 'read' }
  fieldsOnly = await accountWithGrants(server, owner.token, [
    search,
    { resource: 'collections/docs', action: 'read', fields: ['title', 'team'] },
  ] as never)
  redOnly = await accountWithGrants(server, owner.token, [
    search,
    { resource: 'collections/docs', action: 'read', item_filter: { team: { _eq: 'red' } } },
  ] as never)
  const diaryGrants = [
    search,
    { resource: 'collections/diary', action: 'read' },
    { resource: 'collections/diary', action: 'create' },
  ]
  diarist = await accountWithGrants(server, owner.token, diaryGrants)
  otherDiarist = await accountWithGrants(server, owner.token, diaryGrants)
  ids.mine = await record('diary', diarist.token, { text: 'my moonbeam entry' })
  ids.theirs = await record('diary', otherDiarist.token, { text: 'their moonbeam entry' })
  await built('kb', [
    { collection: 'docs', fields: ['title', 'body', 'secret', 'team'] },
    { collection: 'vault', fields: ['text'] },
  ])
  await built('diary_ix', [{ collection: 'diary', fields: ['text'] }])
})
afterAll(async () => {
  await server?.stop()
})

describe('FTS5 syntax through the query text', () => {
  const attempts = [
    'zebra OR password',
    'zebra AND NOT aurora',
    'NEAR(zebra password, 2)',
    'NEAR(',
    'secret:password',
    'secret : zebra',
    '{c0} : password',
    '{c1 c2} : password',
    'c1:password',
    '- {c3} : zebra',
    '^zebra',
    '(zebra)',
    '((((zebra',
    'zebra)))',
    'pass*',
    '"zebra password"',
    '"zebra" "password"',
    'zebra"password',
    '"unclosed',
    '"',
    '"""',
    '""',
    '*',
    '**zebra',
    'zebra**',
    'record_id:x',
    'collection:docs',
    'docs MATCH zebra',
    "zebra' OR '1'='1",
    'zebra; drop table docs',
    '\\"zebra',
    'z\u00e9bra',
    '\uFF02zebra\uFF02',
    'ZEBRA',
    'zebra\u0000password',
    'zebra\u0001',
    '\u0000',
    '\u200bzebra',
    '\ud83e\udd93 zebra',
  ]

  it('every attempt is a literal search or a clear 400, never a 500, and never matches or quotes a field the caller may not read', async () => {
    for (const q of attempts) {
      for (const account of [fieldsOnly, owner]) {
        const reply = await query('kb', q, account.token)
        expect([200, 400], `${JSON.stringify(q)}: ${reply.text}`).toContain(reply.status)
        if (reply.status === 400) {
          expect(reply.body).toMatchObject({ error: 'invalid_request', details: { field: 'q' } })
          continue
        }
        if (account === owner) continue
        expect(reply.text, JSON.stringify(q)).not.toMatch(hiddenWords)
        for (const hit of reply.body.data) expect(['title', 'team'], JSON.stringify(q)).toContain(hit.field)
      }
    }
  })

  it('operators, column filters and prefixes in the text are words: they neither widen nor redirect the search', async () => {
    // Read as FTS5, each of these would find something; read as words, none does (no doc holds "or", "near", "c1"...).
    for (const q of [
      'zebra OR nothingatall',
      'nothingatall OR zebra',
      'NEAR(zebra crossing)',
      '{c2} : zebra',
      'title:zebra',
      'aurora NOT zebra',
      'zebra AND',
    ]) {
      expect(await hits('kb', q, owner.token), q).toEqual([])
    }
    expect(await hits('kb', '"zebra crossing"', owner.token)).toEqual([`docs/${ids.d3}:title`])
    expect(await hits('kb', 'zebr*', owner.token)).toEqual([`docs/${ids.d2}:title`, `docs/${ids.d3}:title`].sort())
    expect(await hits('kb', 'crossing*', fieldsOnly.token)).toEqual([`docs/${ids.d3}:title`])
  })

  it('a control character separates words: the text is searched, not refused', async () => {
    expect(await hits('kb', 'aurora\u0000guide', owner.token)).toEqual([`docs/${ids.d1}:title`])
    expect(await hits('kb', '"aurora\u0000guide"', owner.token)).toEqual([`docs/${ids.d1}:title`])
    expect(await hits('kb', 'aurora\u0007', fieldsOnly.token)).toEqual([`docs/${ids.d1}:title`])
    expect((await query('kb', '\u0000\u0001', owner.token)).status).toBe(400)
  })

  it('a query past 500 characters is refused; one at the limit, made of prefixes, is read', async () => {
    const long = await query('kb', 'z'.repeat(501), owner.token)
    expect(long.status, long.text).toBe(400)
    expect(long.body.error).toBe('invalid_request')
    const prefixes = Array.from({ length: 166 }, () => 'z*').join(' ') + ' ze'
    expect(prefixes).toHaveLength(500)
    expect((await query('kb', prefixes, owner.token)).status).toBe(200)
  })
})

describe('an index an administrator built, queried by narrow roles', () => {
  it('a field the querier may not read is neither matched nor quoted, even where the same row matches in a field it may read', async () => {
    expect(await hits('kb', 'password', fieldsOnly.token)).toEqual([])
    expect(await hits('kb', '"zebra password"', fieldsOnly.token)).toEqual([])
    expect(await hits('kb', 'stripes', fieldsOnly.token)).toEqual([])
    // d3 holds "zebra" in its title and its secret: the reader's hit comes from the title, and its snippet from there.
    const reply = await query('kb', 'zebra', fieldsOnly.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.map((h: any) => [h.id, h.field, h.snippet]).sort()).toEqual(
      [
        [ids.d2, 'title', 'Glacier <mark>zebra</mark>'],
        [ids.d3, 'title', '<mark>Zebra</mark> crossing'],
      ].sort(),
    )
    // Everything is in the file: the administrator finds it.
    expect(await hits('kb', '"zebra password"', owner.token)).toEqual([`docs/${ids.d3}:secret`])
  })

  it('a row the querier may not read is left out: a row rule, and owner scoping in a private collection', async () => {
    expect(await hits('kb', 'zebra', redOnly.token)).toEqual([`docs/${ids.d3}:title`])
    expect(await hits('kb', '2222', redOnly.token)).toEqual([])
    expect(await hits('diary_ix', 'moonbeam', diarist.token)).toEqual([`diary/${ids.mine}:text`])
    expect(await hits('diary_ix', 'moonbeam', otherDiarist.token)).toEqual([`diary/${ids.theirs}:text`])
    expect(await hits('diary_ix', 'moonbeam', owner.token)).toEqual(
      [`diary/${ids.mine}:text`, `diary/${ids.theirs}:text`].sort(),
    )
  })

  it('a source collection the querier may not read is skipped', async () => {
    expect(await hits('kb', 'treasure', owner.token)).toEqual([`vault/${ids.v1}:text`])
    for (const account of [fieldsOnly, redOnly, diarist])
      expect(await hits('kb', 'treasure', account.token)).toEqual([])
    expect(await hits('diary_ix', 'moonbeam', fieldsOnly.token)).toEqual([])
  })
})

describe('another project', () => {
  it('an index of another project is not found; a same-named index answers its own project only', async () => {
    const project = await request('POST', '/api/v1/projects', owner.token, { name: 'elsewhere' })
    expect(project.status, project.text).toBe(201)
    const there = { 'x-project-id': project.body.data.id as string }
    const created = await request(
      'POST',
      '/api/v1/collections',
      owner.token,
      { name: 'docs', fields: [{ name: 'title', type: 'text', required: false }] },
      there,
    )
    expect(created.status, created.text).toBe(201)
    await record('docs', owner.token, { title: 'zebra from elsewhere quasar' }, there)
    await built('theirs_ix', [{ collection: 'docs', fields: ['title'] }], there)
    await built('kb', [{ collection: 'docs', fields: ['title'] }], there)
    expect((await query('theirs_ix', 'quasar', owner.token, there)).body.data).toHaveLength(1)

    for (const token of [owner.token, redOnly.token]) {
      const reply = await query('theirs_ix', 'quasar', token)
      expect(reply.status, reply.text).toBe(404)
      expect(reply.body.error).toBe('not_found')
      expect((await request('GET', `${INDEXES}/theirs_ix`, token)).status).toBe(404)
    }
    expect((await request('PATCH', `${INDEXES}/theirs_ix`, owner.token, { description: 'mine now' })).status).toBe(404)
    expect((await request('POST', `${INDEXES}/theirs_ix/rebuild`, owner.token)).status).toBe(404)
    expect((await request('DELETE', `${INDEXES}/theirs_ix`, owner.token)).status).toBe(404)
    expect((await request('GET', INDEXES, owner.token)).body.data.map((i: any) => i.name)).not.toContain('theirs_ix')
    // This project's kb is this project's file.
    expect(await hits('kb', 'quasar', owner.token)).toEqual([])
    expect(await hits('kb', 'zebra', redOnly.token)).toEqual([`docs/${ids.d3}:title`])
    // Untouched where it lives.
    expect((await request('GET', `${INDEXES}/theirs_ix`, owner.token, undefined, there)).body.data).toMatchObject({
      description: '',
      status: 'ready',
    })
  })
})
