import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'
import { accountWithGrants } from './collections-support.js'

/**
 * GET /api/v1/collections/:name/records/aggregate (issue 16 item 2, decision 031) over real HTTP, on
 * SQLite and PostgreSQL: counts, sums, averages, minimums and maximums, grouped or not, filtered, sorted
 * and limited; the access rules of list (a row filter narrows what is counted, a field outside the
 * caller's allowlist cannot be grouped or aggregated, no read grant is refused, a private collection
 * counts only the caller's own records); bad input is 400, never 500.
 */
const ORDERS = '/api/v1/collections/orders/records'
const AGG = `${ORDERS}/aggregate`
let server: TestServer
let owner: Account
let viewer: Account
let acmeOnly: Account
let narrow: Account
let nobody: Account

const orders = [
  { customer: 'acme', status: 'open', amount: 10.5, qty: 1, placed: '2026-01-05', note: 'n1', meta: { a: 1 } },
  { customer: 'acme', status: 'open', amount: 20, qty: 2, placed: '2026-02-01', note: 'n2' },
  { customer: 'acme', status: 'paid', amount: 30, qty: 3, placed: '2026-03-10', note: 'n3' },
  { customer: 'bolt', status: 'paid', amount: 100, qty: 4, placed: '2025-12-31', note: 'n4' },
  { customer: 'bolt', status: 'void', amount: 1, qty: 5, placed: '2026-01-01', note: 'n5' },
  { customer: 'zeta', status: null, amount: null, qty: 6, placed: null, note: 'n6' },
]

async function get(path: string, token: string) {
  return server.request('GET', path, { token })
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const fields = [
    { name: 'customer', type: 'text' },
    { name: 'status', type: 'text' },
    { name: 'amount', type: 'number' },
    { name: 'qty', type: 'integer' },
    { name: 'placed', type: 'date' },
    { name: 'note', type: 'text' },
    { name: 'meta', type: 'json' },
    { name: 'done', type: 'boolean' },
  ].map((f) => ({ ...f, required: false }))
  const created = await server.request('POST', '/api/v1/collections', {
    token: owner.token,
    body: { name: 'orders', fields },
  })
  expect(created.status, created.text).toBe(201)
  for (const order of orders) {
    const reply = await server.request('POST', ORDERS, { token: owner.token, body: order })
    expect(reply.status, reply.text).toBe(201)
  }
  const deleted = await server.request('POST', ORDERS, {
    token: owner.token,
    body: { customer: 'gone', status: 'open', amount: 999, qty: 99 },
  })
  expect((await server.request('DELETE', `${ORDERS}/${deleted.body.id}`, { token: owner.token })).status).toBe(200)
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
  acmeOnly = await accountWithGrants(server, owner.token, [
    { resource: 'collections/orders', action: 'read', item_filter: { customer: { _eq: 'acme' } } } as never,
  ])
  narrow = await accountWithGrants(server, owner.token, [
    { resource: 'collections/orders', action: 'read', fields: ['status', 'qty'] } as never,
  ])
  nobody = await accountWithGrants(server, owner.token, [{ resource: 'collections/other', action: 'read' }])
})
afterAll(async () => {
  await server?.stop()
})

describe('GET /records/aggregate', () => {
  it('counts the live records (a soft-deleted one is not counted) without groups', async () => {
    const reply = await get(AGG, owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ data: [{ count: 6 }], hasMore: false })
  })

  it('groups and computes every function, groups in ascending order with null first', async () => {
    const reply = await get(`${AGG}?groupBy=status&functions=count,sum,avg,min,max&fields=amount,qty`, viewer.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toEqual([
      {
        status: null,
        count: 1,
        sum_amount: null,
        sum_qty: 6,
        avg_amount: null,
        avg_qty: 6,
        min_amount: null,
        min_qty: 6,
        max_amount: null,
        max_qty: 6,
      },
      {
        status: 'open',
        count: 2,
        sum_amount: 30.5,
        sum_qty: 3,
        avg_amount: 15.25,
        avg_qty: 1.5,
        min_amount: 10.5,
        min_qty: 1,
        max_amount: 20,
        max_qty: 2,
      },
      {
        status: 'paid',
        count: 2,
        sum_amount: 130,
        sum_qty: 7,
        avg_amount: 65,
        avg_qty: 3.5,
        min_amount: 30,
        min_qty: 3,
        max_amount: 100,
        max_qty: 4,
      },
      {
        status: 'void',
        count: 1,
        sum_amount: 1,
        sum_qty: 5,
        avg_amount: 1,
        avg_qty: 5,
        min_amount: 1,
        min_qty: 5,
        max_amount: 1,
        max_qty: 5,
      },
    ])
  })

  it('groups by two fields, filters, sorts by a result key and limits', async () => {
    const filter = encodeURIComponent(JSON.stringify({ qty: { _lte: 5 } }))
    const reply = await get(
      `${AGG}?groupBy=customer,status&functions=sum&fields=qty&filter=${filter}&sortBy=-sum_qty&limit=2`,
      owner.token,
    )
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      data: [
        { customer: 'bolt', status: 'void', sum_qty: 5 },
        { customer: 'bolt', status: 'paid', sum_qty: 4 },
      ],
      hasMore: true,
    })
    const all = await get(`${AGG}?groupBy=customer&filter=${filter}&sortBy=-customer`, owner.token)
    expect(all.body).toEqual({
      data: [
        { customer: 'bolt', count: 2 },
        { customer: 'acme', count: 3 },
      ],
      hasMore: false,
    })
  })

  it("min and max of text and date fields compare by code point and give the field's values", async () => {
    const reply = await get(`${AGG}?functions=min,max&fields=placed,customer`, owner.token)
    expect(reply.body.data).toEqual([
      { min_placed: '2025-12-31', min_customer: 'acme', max_placed: '2026-03-10', max_customer: 'zeta' },
    ])
  })

  it('a row filter grant narrows what is counted to the rows a list would show', async () => {
    const reply = await get(`${AGG}?groupBy=customer&functions=count,sum&fields=amount`, acmeOnly.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toEqual([{ customer: 'acme', count: 3, sum_amount: 60.5 }])
    // The caller's own filter cannot widen it.
    const widened = await get(
      `${AGG}?filter=${encodeURIComponent(JSON.stringify({ customer: { _eq: 'bolt' } }))}`,
      acmeOnly.token,
    )
    expect(widened.body.data).toEqual([{ count: 0 }])
  })

  it("a field outside the caller's allowlist can be neither grouped, aggregated nor filtered on (403); allowed ones can", async () => {
    const allowed = await get(`${AGG}?groupBy=status&functions=sum&fields=qty`, narrow.token)
    expect(allowed.status, allowed.text).toBe(200)
    for (const query of [
      'groupBy=customer',
      'functions=sum&fields=amount',
      'functions=max&fields=note',
      `filter=${encodeURIComponent(JSON.stringify({ amount: { _gt: 50 } }))}`,
    ]) {
      const refused = await get(`${AGG}?${query}`, narrow.token)
      expect(refused.status, `${query}: ${refused.text}`).toBe(403)
      expect(refused.body.error).toBe('forbidden')
      expect(refused.text).not.toMatch(/100|acme/)
    }
  })

  it("a private collection counts only the caller's own records", async () => {
    const made = await server.request('POST', '/api/v1/collections', {
      token: owner.token,
      body: {
        name: 'diary',
        fields: [{ name: 'mood', type: 'text', required: false }],
        accessControl: { preset: 'private', sharing: false },
      },
    })
    expect(made.status, made.text).toBe(201)
    const writer = await accountWithGrants(server, owner.token, [
      { resource: 'collections/diary', action: 'read' },
      { resource: 'collections/diary', action: 'create' },
    ])
    for (const mood of ['calm', 'calm', 'busy'])
      expect(
        (await server.request('POST', '/api/v1/collections/diary/records', { token: owner.token, body: { mood } }))
          .status,
      ).toBe(201)
    expect(
      (
        await server.request('POST', '/api/v1/collections/diary/records', {
          token: writer.token,
          body: { mood: 'calm' },
        })
      ).status,
    ).toBe(201)
    const mine = await get('/api/v1/collections/diary/records/aggregate?groupBy=mood', writer.token)
    expect(mine.status, mine.text).toBe(200)
    expect(mine.body.data).toEqual([{ mood: 'calm', count: 1 }])
  })
})

describe('GET /records/aggregate: refusals', () => {
  runScenarios(
    () => server,
    [
      { name: 'anonymous is 401', method: 'GET', path: AGG, status: 401, contains: { error: 'unauthorized' } },
      {
        name: 'no read grant is 403 and reveals nothing',
        method: 'GET',
        path: AGG,
        as: () => nobody.token,
        status: 403,
        contains: { error: 'forbidden' },
        notContains: ['count'],
      },
      {
        name: 'an unknown collection is 404',
        method: 'GET',
        path: '/api/v1/collections/nope/records/aggregate',
        as: () => owner.token,
        status: 404,
        contains: { error: 'collection_not_found' },
      },
      {
        name: 'an unknown function is 400',
        method: 'GET',
        path: `${AGG}?functions=median&fields=qty`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'sum without fields is 400',
        method: 'GET',
        path: `${AGG}?functions=sum`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request', message: 'functions: sum needs fields' },
      },
      {
        name: 'sum of a text field is 400',
        method: 'GET',
        path: `${AGG}?functions=sum&fields=note`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'avg of a date is 400',
        method: 'GET',
        path: `${AGG}?functions=avg&fields=placed`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'min of a boolean is 400',
        method: 'GET',
        path: `${AGG}?functions=min&fields=done`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'grouping by a JSON field is 400',
        method: 'GET',
        path: `${AGG}?groupBy=meta`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'an unknown field is 400',
        method: 'GET',
        path: `${AGG}?groupBy=nope`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'a path is not a field name (400)',
        method: 'GET',
        path: `${AGG}?groupBy=meta.a`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'an injection attempt is 400',
        method: 'GET',
        path: `${AGG}?groupBy=${encodeURIComponent('status"; drop table orders; --')}`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'more than five groups is 400',
        method: 'GET',
        path: `${AGG}?groupBy=a,b,c,d,e,f`,
        as: () => owner.token,
        status: 400,
      },
      {
        name: 'a field grouped twice is 400',
        method: 'GET',
        path: `${AGG}?groupBy=status,status`,
        as: () => owner.token,
        status: 400,
      },
      {
        name: 'sorting by something not in the result is 400',
        method: 'GET',
        path: `${AGG}?groupBy=status&sortBy=qty`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      { name: 'limit 0 is 400', method: 'GET', path: `${AGG}?limit=0`, as: () => owner.token, status: 400 },
      { name: 'limit 10001 is 400', method: 'GET', path: `${AGG}?limit=10001`, as: () => owner.token, status: 400 },
      { name: 'limit 10000 is fine', method: 'GET', path: `${AGG}?limit=10000`, as: () => owner.token, status: 200 },
      {
        name: 'a bad filter is 400',
        method: 'GET',
        path: `${AGG}?filter=${encodeURIComponent('{"qty":{"_nope":1}}')}`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )
})
