import { describe, expect, it } from 'vitest'
import { fakeDataServices } from '../data-ops-fake.js'
import { testContext } from '../test-context.js'
import { crudQuery } from './crud-query.js'

const ok = (config: Record<string, unknown>) =>
  crudQuery.configSchema.safeParse({ collection: 'tasks', ...config }).success
const names = (n: number) => Array.from({ length: n }, (_, i) => `f${i}`)
const counts = (n: number) => Array.from({ length: n }, () => ({ fn: 'count' }))

describe('crud_query: config', () => {
  it('limit 1-10000, default 100', () => {
    expect(crudQuery.configSchema.parse({ collection: 'tasks' }).limit).toBe(100)
    expect(ok({ limit: 0 })).toBe(false)
    expect(ok({ limit: 1 })).toBe(true)
    expect(ok({ limit: 10_000 })).toBe(true)
    expect(ok({ limit: 10_001 })).toBe(false)
  })
  it('groupBy at most 5; aggregate at most 20 of count, sum, avg, min, max', () => {
    expect(ok({ groupBy: names(5) })).toBe(true)
    expect(ok({ groupBy: names(6) })).toBe(false)
    expect(ok({ aggregate: counts(20) })).toBe(true)
    expect(ok({ aggregate: counts(21) })).toBe(false)
    for (const fn of ['count', 'sum', 'avg', 'min', 'max'])
      expect(ok({ aggregate: [{ fn, field: 'n' }] }), fn).toBe(true)
    expect(ok({ aggregate: [{ fn: 'median', field: 'n' }] })).toBe(false)
    expect(ok({ aggregate: [{ field: 'n' }] })).toBe(false)
    expect(ok({ aggregate: [{ fn: 'sum', field: 'n', as: 'a'.repeat(65) }] })).toBe(false)
  })
})

describe('crud_query: run', () => {
  it("grouped: one aggregate call as the run's principal (count of * counts rows); outputs { rows, count, hasMore }", async () => {
    const { ctx } = testContext()
    const { services, calls } = fakeDataServices({
      aggregate: () => ({ data: [{ team: 'red', count: 2, total: 5 }], hasMore: false }),
    })
    const config = crudQuery.configSchema.parse({
      collection: 'tasks',
      filter: { done: { _eq: false } },
      groupBy: ['team'],
      aggregate: [
        { fn: 'count', field: '*' },
        { fn: 'sum', field: 'hours', as: 'total' },
      ],
      sort: [{ field: 'total', order: 'desc' }],
    })
    expect(await crudQuery.run(config, { ...ctx, services })).toEqual({
      rows: [{ team: 'red', count: 2, total: 5 }],
      count: 1,
      hasMore: false,
    })
    expect(calls).toEqual([
      {
        method: 'aggregate',
        principal: ctx.principal,
        collection: 'tasks',
        args: [
          {
            filter: '{"done":{"_eq":false}}',
            groupBy: ['team'],
            aggregate: [{ fn: 'count' }, { fn: 'sum', field: 'hours', as: 'total' }],
            sort: [{ field: 'total', order: 'desc' }],
            limit: 100,
          },
        ],
      },
    ])
  })
  it('select shows only the chosen group fields; one outside groupBy is refused', async () => {
    const { ctx } = testContext()
    const { services } = fakeDataServices({
      aggregate: () => ({ data: [{ team: 'red', owner: 'u', count: 2 }], hasMore: true }),
    })
    const shown = await crudQuery.run(
      crudQuery.configSchema.parse({
        collection: 'tasks',
        groupBy: ['team', 'owner'],
        select: ['team'],
        aggregate: [{ fn: 'count' }],
      }),
      { ...ctx, services },
    )
    expect(shown).toEqual({ rows: [{ team: 'red', count: 2 }], count: 1, hasMore: true })
    await expect(
      crudQuery.run(crudQuery.configSchema.parse({ collection: 'tasks', groupBy: ['team'], select: ['title'] }), {
        ...ctx,
        services,
      }),
    ).rejects.toMatchObject({ code: 'invalid_request', statusCode: 400 })
  })
  it('without groupBy or aggregate: the records, select choosing their fields', async () => {
    const { ctx } = testContext()
    const { services, calls } = fakeDataServices({ find: () => ({ data: [{ id: 'a', title: 't' }], hasMore: false }) })
    expect(
      await crudQuery.run(crudQuery.configSchema.parse({ collection: 'tasks', select: ['title'], limit: 5 }), {
        ...ctx,
        services,
      }),
    ).toEqual({ rows: [{ id: 'a', title: 't' }], count: 1, hasMore: false })
    expect(calls[0]).toMatchObject({
      method: 'find',
      args: [{ filter: undefined, sort: undefined, limit: 5, offset: 0, fields: ['title'] }],
    })
  })
})
