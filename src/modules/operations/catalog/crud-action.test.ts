import { describe, expect, it } from 'vitest'
import { fakeDataServices } from '../data-ops-fake.js'
import { testContext } from '../test-context.js'
import { crudAction } from './crud-action.js'

const ok = (config: Record<string, unknown>) =>
  crudAction.configSchema.safeParse({ collection: 'tasks', ...config }).success
const parse = (config: Record<string, unknown>) => crudAction.configSchema.parse({ collection: 'tasks', ...config })

describe('crud_action: config', () => {
  it('action defaults to read; limit 1-10000, default 25; permanent false', () => {
    expect(parse({})).toEqual({ collection: 'tasks', action: 'read', limit: 25, offset: 0, permanent: false })
    expect(ok({ limit: 0 })).toBe(false)
    expect(ok({ limit: 1 })).toBe(true)
    expect(ok({ limit: 10_000 })).toBe(true)
    expect(ok({ limit: 10_001 })).toBe(false)
    expect(ok({ action: 'upsert' })).toBe(false)
  })
  it('create needs data; update needs object data and one target; delete one target', () => {
    expect(ok({ action: 'create' })).toBe(false)
    expect(ok({ action: 'create', data: [{ a: 1 }] })).toBe(true)
    expect(ok({ action: 'update', id: 'x' })).toBe(false)
    expect(ok({ action: 'update', id: 'x', data: [{ a: 1 }] })).toBe(false)
    expect(ok({ action: 'update', data: { a: 1 } })).toBe(false)
    expect(ok({ action: 'update', id: 'x', data: { a: 1 } })).toBe(true)
    expect(ok({ action: 'delete' })).toBe(false)
    expect(ok({ action: 'delete', ids: ['x'], filter: {} })).toBe(false)
    expect(ok({ action: 'delete', filter: {} })).toBe(true)
  })
  it('groupBy at most 5, aggregate at most 20, ids at most 1000', () => {
    expect(ok({ action: 'query', groupBy: ['a', 'b', 'c', 'd', 'e'] })).toBe(true)
    expect(ok({ action: 'query', groupBy: ['a', 'b', 'c', 'd', 'e', 'f'] })).toBe(false)
    expect(ok({ action: 'query', aggregate: Array(21).fill({ fn: 'count' }) })).toBe(false)
    expect(ok({ action: 'delete', ids: Array(1001).fill('x') })).toBe(false)
  })
})

describe('crud_action: run', () => {
  it("dispatches each action to the same service calls as the crud_* operations, as the run's principal", async () => {
    const { ctx } = testContext()
    const { services, calls } = fakeDataServices({ matchingIds: () => ['a'] })
    const run = (config: Record<string, unknown>) => crudAction.run(parse(config), { ...ctx, services })
    expect(await run({ action: 'create', data: { t: 1 } })).toEqual({ record: { id: 'r1', t: 1 } })
    expect(await run({ filter: { t: { _eq: 1 } }, limit: 3 })).toEqual({ records: [], count: 0, hasMore: false })
    expect(await run({ action: 'update', filter: {}, data: { t: 2 } })).toEqual({
      records: [{ id: 'a', t: 2 }],
      count: 1,
    })
    expect(await run({ action: 'delete', id: 'a', permanent: true })).toEqual({ ids: ['a'], count: 1 })
    expect(await run({ action: 'query', groupBy: ['t'] })).toEqual({ rows: [], count: 0, hasMore: false })
    expect(calls.map((c) => c.method)).toEqual(['create', 'find', 'matchingIds', 'update', 'delete', 'aggregate'])
    expect(calls.every((c) => c.principal === ctx.principal && c.collection === 'tasks')).toBe(true)
    expect(calls[1]!.args[0]).toMatchObject({ filter: '{"t":{"_eq":1}}', limit: 3, offset: 0 })
    expect(calls[4]!.args).toEqual(['a', true])
  })
})
