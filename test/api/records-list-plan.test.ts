import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'

// Lists take the fast plan (issue 33, decision 082), shown by the plans the index advisor reports (the
// database's own EXPLAIN of each list's statement). 10,000 articles, `status` and `views` both indexed, no
// compound index: two thirds published, a third draft, one in a hundred archived.
// - status = published, newest views first: a page is found by walking the views index (about 38 rows),
//   not by reading the ~6,600 published rows through the status index and sorting them (SQLite's own choice).
// - status = archived: 100 rows; reading them and sorting is cheaper than walking (2,500 rows): the status index.
// - the advisor names (status, -views) for the sorted shape; once made, the list uses it.

const rows = 10_000
const statusOf = (k: number) => (k % 100 === 0 ? 'archived' : k % 3 === 0 ? 'draft' : 'published')
const viewsOf = (k: number) => (k * 7919) % 10_000

let server: TestServer
let owner: Account
let sqlite: boolean
beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  sqlite = (await server.app.registry.get(server.app.defaultProject.id)).kind === 'sqlite'
  const made = await server.request('POST', '/api/v1/collections', {
    token: owner.token,
    body: {
      name: 'articles',
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'status', type: 'text', required: false, indexed: true },
        { name: 'views', type: 'integer', required: false, indexed: true },
      ],
    },
  })
  expect(made.status, made.text).toBe(201)
  for (let chunk = 0; chunk < rows / 1000; chunk++) {
    const lines = Array.from({ length: 1000 }, (_, i) => {
      const k = chunk * 1000 + i
      return JSON.stringify({ title: `Article ${k}`, status: statusOf(k), views: viewsOf(k) })
    }).join('\n')
    const reply = await server.request('POST', '/api/v1/collections/articles/records/import-ndjson', {
      token: owner.token,
      rawBody: lines,
      headers: { 'content-type': 'application/x-ndjson' },
    })
    expect(reply.status, reply.text).toBe(200)
  }
}, 120_000)
afterAll(async () => {
  await server?.stop()
})

interface Advice {
  shape: { filter: { field: string; op: string }[]; sortBy: string; search: boolean }
  choice: string
  plan: string | null
  slow: boolean
  seen: number
  index: { fields: string[] } | null
}

/** The titles a list of `status` sorted by -views must answer, worked out here. */
function expected(status: string, from: number, count: number): string[] {
  const all = Array.from({ length: rows }, (_, k) => k).filter((k) => statusOf(k) === status)
  // views desc; ties (none here: views are distinct per 10,000) would go by id desc.
  all.sort((a, b) => viewsOf(b) - viewsOf(a))
  return all.slice(from, from + count).map((k) => `Article ${k}`)
}

async function list(query: string) {
  const reply = await server.request('GET', `/api/v1/collections/articles/records?${query}`, { token: owner.token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body as { data: { title: string }[]; total: number; cursors?: { next: string | null } }
}

const filterOf = (status: string) => `filter=${encodeURIComponent(JSON.stringify({ status: { _eq: status } }))}`
// The rare value's lists add a condition on the sort field, which no plan changes for: a shape of their own,
// whose plan is taken with the rare value (a shape's plan is taken once, with the values of its first list).
const rareFilter = `filter=${encodeURIComponent(JSON.stringify({ status: { _eq: 'archived' }, views: { _gte: 0 } }))}`

/** The advisor's entry for a shape of `status eq`, sorted by -views, once its plan has been taken. */
async function adviceFor(choice: string, fields = 1): Promise<Advice> {
  for (let i = 0; i < 100; i++) {
    const reply = await server.request('GET', '/api/v1/collections/articles/index-advice', { token: owner.token })
    expect(reply.status, reply.text).toBe(200)
    const found = (reply.body.data as Advice[]).find(
      (a) =>
        a.shape.sortBy === '-views' &&
        a.shape.filter.some((f) => f.field === 'status' && f.op === 'eq') &&
        a.shape.filter.length === fields &&
        a.choice === choice &&
        a.plan !== null,
    )
    if (found) return found
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error(`no advice for the status shape (${choice})`)
}

describe('a filtered, sorted page', () => {
  it('a common value: walks the sort index (page and cursor mode), same rows as sorting would give', async () => {
    const page1 = await list(`limit=25&sortBy=-views&${filterOf('published')}`)
    expect(page1.data.map((r) => r.title)).toEqual(expected('published', 0, 25))
    expect(page1.total).toBe(expected('published', 0, rows).length)
    const page3 = await list(`limit=25&page=3&sortBy=-views&${filterOf('published')}`)
    expect(page3.data.map((r) => r.title)).toEqual(expected('published', 50, 25))
    const first = await list(`limit=25&sortBy=-views&${filterOf('published')}&cursor=`)
    const second = await list(`limit=25&sortBy=-views&${filterOf('published')}&cursor=${first.cursors!.next}`)
    expect(second.data.map((r) => r.title)).toEqual(expected('published', 25, 25))

    const advice = await adviceFor(sqlite ? 'walk' : 'planner')
    if (sqlite) {
      // SQLite alone takes the status index and sorts (USE TEMP B-TREE FOR ORDER BY).
      expect(advice.plan).toMatch(/^SCAN articles USING INDEX \S*views\S*$/)
    } else {
      expect(advice.plan).toMatch(/Index Scan Backward using \S*views\S* on articles \(filter\)/)
      expect(advice.plan).not.toMatch(/Sort/)
    }
    expect(advice.slow).toBe(false)
    expect(advice.index).toBeNull()
  })

  it('a rare value: searches the filter index and sorts; the advisor names the compound index, which then serves it', async () => {
    const rare = await list(`limit=25&sortBy=-views&${rareFilter}`)
    expect(rare.data.map((r) => r.title)).toEqual(expected('archived', 0, 25))
    const advice = await adviceFor(sqlite ? 'search' : 'planner', 2)
    if (sqlite) expect(advice.plan).toMatch(/SEARCH articles USING INDEX \S*status\S* \(status=\?\); USE TEMP B-TREE/)
    expect(advice.slow).toBe(true)
    expect(advice.index).toEqual({ fields: ['status', '-views'] })
    // The advice never holds a value the lists compared with.
    const raw = (await server.request('GET', '/api/v1/collections/articles/index-advice', { token: owner.token })).text
    expect(raw).not.toMatch(/archived|published/)

    const patched = await server.request('PATCH', '/api/v1/collections/articles', {
      token: owner.token,
      body: { indexes: [advice.index] },
    })
    expect(patched.status, patched.text).toBe(200)
    const again = await list(`limit=25&sortBy=-views&${rareFilter}`)
    expect(again.data.map((r) => r.title)).toEqual(expected('archived', 0, 25))
    // The schema changed: the shapes start afresh, and the sorted one is served by the new index.
    const served = await adviceFor('planner', 2)
    expect(served.slow).toBe(false)
    expect(served.plan).toMatch(/ix_/)
    expect(served.plan).not.toMatch(/TEMP B-TREE|Sort/)
  })

  it('a search matching most rows walks the sort index too, testing the match on each row', async () => {
    const found = await list(`limit=25&sortBy=-views&search=Article`)
    const all = Array.from({ length: rows }, (_, k) => k).sort((a, b) => viewsOf(b) - viewsOf(a))
    expect(found.data.map((r) => r.title)).toEqual(all.slice(0, 25).map((k) => `Article ${k}`))
    let advice: Advice | undefined
    for (let i = 0; i < 100 && !advice?.plan; i++) {
      const reply = await server.request('GET', '/api/v1/collections/articles/index-advice', { token: owner.token })
      advice = (reply.body.data as Advice[]).find((a) => a.shape.search && a.shape.sortBy === '-views')
      if (!advice?.plan) await new Promise((r) => setTimeout(r, 20))
    }
    expect(advice?.choice).toBe(sqlite ? 'walk' : 'planner')
    if (sqlite) expect(advice?.plan).toMatch(/^SCAN articles USING INDEX \S*views\S*/)
  })

  it('only who may change the schema reads the advice; an unknown collection is 404', async () => {
    const editor = await createAccount(server, owner.token, { role: 'editor' })
    const refused = await server.request('GET', '/api/v1/collections/articles/index-advice', { token: editor.token })
    expect(refused.status, refused.text).toBe(403)
    const missing = await server.request('GET', '/api/v1/collections/nope/index-advice', { token: owner.token })
    expect(missing.status, missing.text).toBe(404)
    const anonymous = await server.request('GET', '/api/v1/collections/articles/index-advice')
    expect(anonymous.status).toBe(401)
  })
})
