import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { createCollection } from './records-fixtures.js'

// Search indexes (issue 17, decision 042): definitions over real HTTP, builds into SQLite FTS5 files in
// object storage as the caller, queries over the built file with the querier's own row and column rules,
// staleness reported by import, import jobs and truncate, finalize?rebuild=true, cascades of removed
// collections.

let server: TestServer
let owner: Account

const call = (method: string, path: string, token?: string, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token, ...(body === undefined ? {} : { body }) })
const indexes = (rest = '') => `/api/v1/search-indexes${rest}`
const query = (name: string, q: string, token: string, limit?: number) =>
  call(
    'GET',
    indexes(`/${name}/query?${new URLSearchParams({ q, ...(limit ? { limit: String(limit) } : {}) })}`),
    token,
  )
const records = (collection: string, rest = '') => `/api/v1/collections/${collection}/records${rest}`
const ndjson = (...rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n'
const importNdjson = (collection: string, rows: unknown[], token: string, params = '') =>
  server.request('POST', records(collection, `/import-ndjson${params}`), {
    token,
    rawBody: ndjson(...rows),
    headers: { 'content-type': 'application/x-ndjson' },
  })
/** Background builds are done (the module's own promise; no timing). */
const settled = () => server.app.services.searchIndexes.settled()

async function seed(collection: string, values: Record<string, unknown>): Promise<string> {
  const reply = await call('POST', records(collection), owner.token, values)
  expect(reply.status, reply.text).toBe(201)
  return reply.body.id
}

async function indexOf(name: string, token = owner.token): Promise<Record<string, any>> {
  const reply = await call('GET', indexes(`/${name}`), token)
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

/** Hits of a query that must answer 200: `collection/id` of each, best first. */
async function hitsOf(name: string, q: string, token = owner.token): Promise<string[]> {
  const reply = await query(name, q, token)
  expect(reply.status, reply.text).toBe(200)
  return (reply.body.data as { collection: string; id: string }[]).map((h) => `${h.collection}/${h.id}`)
}

async function rebuilt(name: string, token = owner.token): Promise<Record<string, any>> {
  const reply = await call('POST', indexes(`/${name}/rebuild`), token)
  expect(reply.status, reply.text).toBe(202)
  expect(reply.body.data.status).toBe('building')
  await settled()
  return indexOf(name)
}

const ids: Record<string, string> = {}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const text = (name: string) => ({ name, type: 'text', required: false })
  await createCollection(server, owner.token, 'articles', [text('title'), text('body'), text('team'), text('secret')])
  await createCollection(server, owner.token, 'notes', [text('text')])
  ids.red = await seed('articles', {
    title: 'Aurora borealis guide',
    body: 'Watching the northern lights in winter',
    team: 'red',
    secret: 'vault combination 1234',
  })
  ids.red2 = await seed('articles', {
    title: 'Aurora photography',
    body: 'Long exposure aurora aurora tips',
    team: 'red',
    secret: 'nothing',
  })
  ids.blue = await seed('articles', {
    title: 'Glacier hiking',
    body: 'Crampons and ropes',
    team: 'blue',
    secret: 'glacier password hunter2',
  })
  ids.note = await seed('notes', { text: 'Remember the aurora forecast <script>alert(1)</script>' })
})
afterAll(async () => {
  await server?.stop()
})

describe('the scenario: create, build, query, import (stale), finalize with rebuild', () => {
  it('goes from a definition to a ready index whose new rows are found', async () => {
    const created = await call('POST', indexes(), owner.token, {
      name: 'kb',
      description: 'Articles and notes',
      sources: [
        { collection: 'articles', fields: ['title', 'body'] },
        { collection: 'notes', fields: ['text'] },
      ],
    })
    expect(created.status, created.text).toBe(201)
    expect(created.body.data).toMatchObject({
      name: 'kb',
      status: 'stale',
      builtAt: null,
      documentCount: 0,
      buildId: null,
    })
    expect(
      (await call('POST', indexes(), owner.token, { name: 'kb', sources: [{ collection: 'notes', fields: ['text'] }] }))
        .status,
    ).toBe(409)

    // Never built: nothing to query yet.
    const early = await query('kb', 'aurora', owner.token)
    expect(early.status, early.text).toBe(409)
    expect(early.body.error).toBe('conflict')

    const ready = await rebuilt('kb')
    expect(ready).toMatchObject({ status: 'ready', documentCount: 4, error: null })
    expect(ready.builtAt).toEqual(expect.any(Number))
    expect(ready.sizeBytes).toBeGreaterThan(0)
    // The built file is in object storage (the local driver under DATA_DIR), where lib/storage keeps objects.
    expect(
      await server.app.storage.head(`search-indexes/${server.app.defaultProject.id}/${ready.id}/${ready.buildId}.db`),
    ).toMatchObject({ sizeBytes: ready.sizeBytes })

    // bm25: of the articles, the one saying aurora three times ranks first; the note is found too; snippets mark the match.
    const reply = await query('kb', 'aurora', owner.token)
    expect(reply.status, reply.text).toBe(200)
    const found = reply.body.data.map((h: any) => `${h.collection}/${h.id}`)
    expect([...found].sort()).toEqual([`articles/${ids.red}`, `articles/${ids.red2}`, `notes/${ids.note}`].sort())
    expect(found.filter((f: string) => f.startsWith('articles/'))).toEqual([
      `articles/${ids.red2}`,
      `articles/${ids.red}`,
    ])
    const scores = reply.body.data.map((h: any) => h.score)
    expect([...scores].sort((a, b) => b - a)).toEqual(scores)
    expect(reply.body.data.find((h: any) => h.id === ids.red2).snippet).toContain('<mark>Aurora</mark>')
    expect(reply.body.index).toMatchObject({ name: 'kb', status: 'ready' })
    // A record's own markup comes back escaped, never as HTML.
    const note = reply.body.data.find((h: any) => h.collection === 'notes')
    expect(note.snippet).toContain('&lt;script&gt;')
    expect(note.snippet).not.toContain('<script>')
    // Phrases and prefixes; limit.
    expect(await hitsOf('kb', '"northern lights"')).toEqual([`articles/${ids.red}`])
    expect(await hitsOf('kb', 'glac*')).toEqual([`articles/${ids.blue}`])
    expect((await query('kb', 'aurora', owner.token, 1)).body.data).toHaveLength(1)
    // A field outside the sources is not in the index.
    expect(await hitsOf('kb', 'hunter2')).toEqual([])

    // An import into a source reports the index stale, and it is; it keeps serving the old file.
    const imported = await importNdjson(
      'articles',
      [{ title: 'Zeppelin history', body: 'airships', team: 'red' }],
      owner.token,
    )
    expect(imported.status, imported.text).toBe(200)
    expect(imported.body).toMatchObject({ imported: 1, staleSearchIndexes: ['kb'] })
    expect((await indexOf('kb')).status).toBe('stale')
    expect(await hitsOf('kb', 'zeppelin')).toEqual([])
    expect(await hitsOf('kb', 'aurora')).toHaveLength(3)
    // A dry run stores nothing and makes nothing stale.
    const dry = await importNdjson('articles', [{ title: 'Dry' }], owner.token, '?dryRun=true')
    expect(dry.body.staleSearchIndexes).toEqual([])

    // An import job: each chunk reports the index stale; finalize?rebuild=true rebuilds it.
    const job = await call('POST', records('articles', '/import-jobs'), owner.token, { total: 1 })
    expect(job.status, job.text).toBe(201)
    const chunk = await importNdjson(
      'articles',
      [{ title: 'Quasar notes', body: 'far away', team: 'blue' }],
      owner.token,
      `?jobId=${job.body.jobId}`,
    )
    expect(chunk.body).toMatchObject({ imported: 1, staleSearchIndexes: ['kb'] })
    const finalized = await call(
      'POST',
      records('articles', `/import-jobs/${job.body.jobId}/finalize?rebuild=true`),
      owner.token,
    )
    expect(finalized.status, finalized.text).toBe(200)
    expect(finalized.body).toMatchObject({ status: 'complete', imported: 1, rebuildingSearchIndexes: ['kb'] })
    await settled()
    const after = await indexOf('kb')
    expect(after).toMatchObject({ status: 'ready', documentCount: 6 })
    expect(after.buildId).not.toBe(ready.buildId)
    expect(await hitsOf('kb', 'zeppelin')).toHaveLength(1)
    expect(await hitsOf('kb', 'quasar')).toHaveLength(1)
    // The replaced build's file is gone from object storage.
    expect(
      await server.app.storage.head(`search-indexes/${server.app.defaultProject.id}/${ready.id}/${ready.buildId}.db`),
    ).toBeNull()

    // A finalize without rebuild starts none.
    const job2 = await call('POST', records('notes', '/import-jobs'), owner.token, {})
    const done2 = await call('POST', records('notes', `/import-jobs/${job2.body.jobId}/finalize`), owner.token)
    expect(done2.body).not.toHaveProperty('rebuildingSearchIndexes')
    expect((await indexOf('kb')).status).toBe('ready')
  })

  it('truncate reports the indexes drawing from the collection and marks them stale', async () => {
    await createCollection(server, owner.token, 'scratch', [{ name: 'word', type: 'text', required: false }])
    await seed('scratch', { word: 'ephemeral' })
    expect(
      (
        await call('POST', indexes(), owner.token, {
          name: 'scratch_ix',
          sources: [{ collection: 'scratch', fields: ['word'] }],
        })
      ).status,
    ).toBe(201)
    expect(await rebuilt('scratch_ix')).toMatchObject({ status: 'ready', documentCount: 1 })
    const reply = await call('POST', '/api/v1/collections/scratch/truncate', owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ success: true, deleted: 1, staleSearchIndexes: ['scratch_ix'] })
    expect((await indexOf('scratch_ix')).status).toBe('stale')
    // Until rebuilt, the old rows are still served (core-api: truncate); a rebuild empties it.
    expect(await hitsOf('scratch_ix', 'ephemeral')).toHaveLength(1)
    expect(await rebuilt('scratch_ix')).toMatchObject({ status: 'ready', documentCount: 0 })
    expect(await hitsOf('scratch_ix', 'ephemeral')).toEqual([])
    // A collection no index draws from reports none.
    await createCollection(server, owner.token, 'lonely', [{ name: 'word', type: 'text', required: false }])
    expect((await call('POST', '/api/v1/collections/lonely/truncate', owner.token)).body.staleSearchIndexes).toEqual([])
  })

  it('the geospatial importer reports and marks the indexes drawing from the collection stale', async () => {
    await createCollection(server, owner.token, 'places', [
      { name: 'name', type: 'text', required: true },
      { name: 'location', type: 'geo', required: false },
    ])
    expect(
      (
        await call('POST', indexes(), owner.token, {
          name: 'places_ix',
          sources: [{ collection: 'places', fields: ['name'] }],
        })
      ).status,
    ).toBe(201)
    expect(await rebuilt('places_ix')).toMatchObject({ status: 'ready', documentCount: 0 })
    const feature = {
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [24.94, 60.17] },
      properties: { name: 'Helsinki' },
    }
    const reply = await server.request('POST', records('places', '/import'), {
      token: owner.token,
      rawBody: JSON.stringify(feature),
      headers: { 'content-type': 'application/geo+json' },
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({ imported: 1, staleSearchIndexes: ['places_ix'] })
    expect((await indexOf('places_ix')).status).toBe('stale')
    expect(await rebuilt('places_ix')).toMatchObject({ status: 'ready', documentCount: 1 })
    expect(await hitsOf('places_ix', 'helsinki')).toHaveLength(1)
  })

  it('a malformed FTS query is 400 invalid_request, never a 500; FTS operators are plain words', async () => {
    for (const q of ['"unclosed phrase', '&& ||', '"']) {
      const reply = await query('kb', q, owner.token)
      expect(reply.status, `${q}: ${reply.text}`).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
    }
    for (const q of [
      'aurora OR',
      'NOT aurora',
      'title:aurora',
      '{c0} : aurora',
      'NEAR(aurora',
      'aurora)',
      '^aurora',
      'aurora*',
    ]) {
      const reply = await query('kb', q, owner.token)
      expect(reply.status, `${q}: ${reply.text}`).toBe(200)
    }
    expect((await query('kb', '', owner.token)).status).toBe(400)
    expect((await query('kb', 'x', owner.token, 101)).status).toBe(400)
    expect((await query('nope', 'aurora', owner.token)).status).toBe(404)
  })
})

describe('who may build and query what', () => {
  let reader: Account
  let outsider: Account

  beforeAll(async () => {
    // Reads red articles only, and of them title and team (never body or secret); nothing of notes.
    const role = await call('POST', '/api/v1/roles', owner.token, { name: 'red_reader' })
    expect(role.status, role.text).toBe(201)
    const grants = await call('PUT', `/api/v1/roles/${role.body.data.id}/grants`, owner.token, {
      grants: [
        {
          resource: 'collections/articles',
          action: 'read',
          item_filter: { team: { _eq: 'red' } },
          fields: ['title', 'team'],
        },
        { resource: 'system/search-indexes', action: 'read' },
        { resource: 'system/search-indexes', action: 'create' },
        { resource: 'system/search-indexes', action: 'execute' },
      ],
    })
    expect(grants.status, grants.text).toBe(200)
    reader = await createAccount(server, owner.token, { role: 'red_reader' })
    outsider = await createAccount(server, owner.token, { role: 'viewer' })
  })

  it('a user cannot define an index over a collection or a field they may not read', async () => {
    const notes = await call('POST', indexes(), reader.token, {
      name: 'peek_notes',
      sources: [{ collection: 'notes', fields: ['text'] }],
    })
    expect(notes.status, notes.text).toBe(404)
    expect(notes.body.error).toBe('collection_not_found')
    const secret = await call('POST', indexes(), reader.token, {
      name: 'peek_secret',
      sources: [{ collection: 'articles', fields: ['title', 'secret'] }],
    })
    expect(secret.status, secret.text).toBe(422)
    expect(secret.text).toContain('secret')
    expect((await call('GET', indexes('/peek_notes'), owner.token)).status).toBe(404)
    expect((await call('GET', indexes('/peek_secret'), owner.token)).status).toBe(404)
  })

  it('querying an index someone else built answers only rows and fields the querier may read', async () => {
    // kb was built by the owner: it holds every article, bodies included, and the notes.
    expect((await hitsOf('kb', 'aurora', reader.token)).sort()).toEqual(
      [`articles/${ids.red}`, `articles/${ids.red2}`].sort(),
    )
    // A blue article's title: in the file, but not a row the reader may read.
    expect(await hitsOf('kb', 'glacier', reader.token)).toEqual([])
    expect(await hitsOf('kb', 'glacier')).toEqual([`articles/${ids.blue}`])
    // A red article's body: a row the reader reads, but not that field; not matched, not quoted in a snippet.
    expect(await hitsOf('kb', '"northern lights"', reader.token)).toEqual([])
    const reply = await query('kb', 'aurora', reader.token)
    expect(reply.text).not.toMatch(/northern|exposure|forecast/i)
    expect(reply.body.data.every((h: any) => h.field === 'title')).toBe(true)
    // Notes: a collection the reader cannot read at all.
    expect(await hitsOf('kb', 'forecast', reader.token)).toEqual([])
  })

  it('an index built by a user holds only what that user can read', async () => {
    const created = await call('POST', indexes(), reader.token, {
      name: 'red_titles',
      sources: [{ collection: 'articles', fields: ['title', 'team'] }],
    })
    expect(created.status, created.text).toBe(201)
    const built = await rebuilt('red_titles', reader.token)
    // Red articles only: the two seeded and the imported zeppelin one.
    expect(built).toMatchObject({ status: 'ready', documentCount: 3 })
    // The owner may read everything, yet the file the reader built has no blue article in it.
    expect(await hitsOf('red_titles', 'glacier')).toEqual([])
    expect(await hitsOf('red_titles', 'quasar')).toEqual([])
    expect(await hitsOf('red_titles', 'zeppelin')).toHaveLength(1)
    expect(await hitsOf('red_titles', 'aurora', reader.token)).toHaveLength(2)
  })

  it("build_search_index in a flow run builds as the run's user, waiting for the build", async () => {
    const created = await call('POST', indexes(), owner.token, {
      name: 'op_ix',
      sources: [{ collection: 'articles', fields: ['title'] }],
    })
    expect(created.status, created.text).toBe(201)
    const flow = await call('POST', '/api/v1/automate/flows', owner.token, {
      name: 'reindex',
      triggerType: 'manual',
      triggerConfig: {},
      operations: [{ key: 'build', type: 'build_search_index', config: { indexName: 'op_ix' } }],
    })
    expect(flow.status, flow.text).toBe(201)
    const flowId = flow.body.data.id
    expect(
      (await call('POST', `/api/v1/automate/flows/${flowId}/publish`, owner.token, { changeSummary: 't' })).status,
    ).toBe(200)
    expect(
      (await call('PATCH', `/api/v1/automate/flows/${flowId}/status`, owner.token, { status: 'active' })).status,
    ).toBe(200)
    const started = await call('POST', `/api/v1/automate/flows/${flowId}/execute`, owner.token, {})
    expect(started.status, started.text).toBe(202)
    // The run engine's own runs API, polled as the automation tests do.
    let run: any
    for (let i = 0; i < 1500; i++) {
      run = (await call('GET', `/api/v1/automate/runs/${started.body.data.runId}`, owner.token)).body.data
      if (run && !['pending', 'running'].includes(run.status)) break
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(run.status, JSON.stringify(run)).toBe('completed')
    const output = run.stepLogs.find((l: any) => l.key === 'build').output
    // Every article (the owner reads them all), built before the step ended.
    expect(output).toMatchObject({ indexName: 'op_ix', status: 'ready', documentCount: 5, buildId: expect.any(String) })
    expect(await indexOf('op_ix')).toMatchObject({ status: 'ready', buildId: output.buildId })
  })

  it('without the search-index permissions: 403, and finalize?rebuild=true rebuilds nothing', async () => {
    expect((await query('kb', 'aurora', outsider.token)).status).toBe(403)
    expect((await call('GET', indexes(), outsider.token)).status).toBe(403)
    expect(
      (
        await call('POST', indexes(), outsider.token, {
          name: 'x',
          sources: [{ collection: 'articles', fields: ['title'] }],
        })
      ).status,
    ).toBe(403)
    expect((await call('POST', indexes('/kb/rebuild'), outsider.token)).status).toBe(403)
    expect((await call('DELETE', indexes('/kb'), reader.token)).status).toBe(403)
    expect((await call('PATCH', indexes('/kb'), reader.token, { description: 'mine now' })).status).toBe(403)
  })
})

describe('definitions and removed collections', () => {
  it('PATCH changes sources (stale), DELETE removes the index and its file', async () => {
    expect(
      (
        await call('POST', indexes(), owner.token, {
          name: 'temp_ix',
          sources: [{ collection: 'notes', fields: ['text'] }],
        })
      ).status,
    ).toBe(201)
    const built = await rebuilt('temp_ix')
    const patched = await call('PATCH', indexes('/temp_ix'), owner.token, {
      description: 'two sources',
      sources: [
        { collection: 'notes', fields: ['text'] },
        { collection: 'articles', fields: ['title'] },
      ],
    })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body.data).toMatchObject({ description: 'two sources', status: 'stale' })
    const bad = await call('PATCH', indexes('/temp_ix'), owner.token, {
      sources: [{ collection: 'articles', fields: ['nope'] }],
    })
    expect(bad.status, bad.text).toBe(422)
    const list = await call('GET', indexes(), owner.token)
    expect(list.body.data.map((i: any) => i.name)).toContain('temp_ix')
    expect((await call('DELETE', indexes('/temp_ix'), owner.token)).status).toBe(204)
    expect((await call('GET', indexes('/temp_ix'), owner.token)).status).toBe(404)
    expect(
      await server.app.storage.head(`search-indexes/${server.app.defaultProject.id}/${built.id}/${built.buildId}.db`),
    ).toBeNull()
  })

  it('deleting a collection removes it from the sources; an index left with none goes', async () => {
    await createCollection(server, owner.token, 'doomed', [{ name: 'word', type: 'text', required: false }])
    expect(
      (
        await call('POST', indexes(), owner.token, {
          name: 'mixed_ix',
          sources: [
            { collection: 'doomed', fields: ['word'] },
            { collection: 'notes', fields: ['text'] },
          ],
        })
      ).status,
    ).toBe(201)
    expect(
      (
        await call('POST', indexes(), owner.token, {
          name: 'doomed_ix',
          sources: [{ collection: 'doomed', fields: ['word'] }],
        })
      ).status,
    ).toBe(201)
    const removed = await call('DELETE', '/api/v1/collections/doomed', owner.token)
    expect(removed.status, removed.text).toBe(200)
    expect((await indexOf('mixed_ix')).sources).toEqual([{ collection: 'notes', fields: ['text'] }])
    expect((await call('GET', indexes('/doomed_ix'), owner.token)).status).toBe(404)
  })
})
