import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { fakeDataServices } from '../data-ops-fake.js'
import { testContext } from '../test-context.js'
import { crudRead } from './crud-read.js'

const ok = (config: Record<string, unknown>) =>
  crudRead.configSchema.safeParse({ collection: 'tasks', ...config }).success
const sortKeys = (n: number) => Array.from({ length: n }, (_, i) => ({ field: `f${i}` }))

describe('crud_read: config', () => {
  it('limit 1-1000, default 25; a numeric string is a number', () => {
    expect(crudRead.configSchema.parse({ collection: 'tasks' })).toEqual({ collection: 'tasks', limit: 25, offset: 0 })
    expect(ok({ limit: 0 })).toBe(false)
    expect(ok({ limit: 1 })).toBe(true)
    expect(ok({ limit: 1000 })).toBe(true)
    expect(ok({ limit: 1001 })).toBe(false)
    expect(ok({ limit: 1.5 })).toBe(false)
    expect(crudRead.configSchema.parse({ collection: 'tasks', limit: '7' }).limit).toBe(7)
  })
  it('offset 0 and up, default 0', () => {
    expect(ok({ offset: -1 })).toBe(false)
    expect(ok({ offset: 0 })).toBe(true)
    expect(ok({ offset: 1_000_000_000 })).toBe(true)
    expect(ok({ offset: 1_000_000_001 })).toBe(false)
  })
  it('sort: at most 10 keys, order asc (default) or desc', () => {
    expect(ok({ sort: sortKeys(10) })).toBe(true)
    expect(ok({ sort: sortKeys(11) })).toBe(false)
    expect(crudRead.configSchema.parse({ collection: 'tasks', sort: [{ field: 'a' }] }).sort).toEqual([
      { field: 'a', order: 'asc' },
    ])
    expect(ok({ sort: [{ field: 'a', order: 'up' }] })).toBe(false)
    expect(ok({ sort: [{ field: '' }] })).toBe(false)
  })
  it('filter an object or a list; fields a list of names; collection required', () => {
    expect(ok({ filter: { a: { _eq: 1 } } })).toBe(true)
    expect(ok({ filter: [] })).toBe(true)
    expect(ok({ filter: 'a=1' })).toBe(false)
    expect(ok({ fields: ['a'] })).toBe(true)
    expect(ok({ fields: [''] })).toBe(false)
    expect(crudRead.configSchema.safeParse({}).success).toBe(false)
  })
})

describe('crud_read: run', () => {
  it("finds as the run's principal with the filter as JSON text, and outputs { records, count, hasMore }", async () => {
    const { ctx } = testContext()
    const { services, calls } = fakeDataServices({ find: () => ({ data: [{ id: 'a' }, { id: 'b' }], hasMore: true }) })
    const config = crudRead.configSchema.parse({
      collection: 'tasks',
      filter: { owner: { _eq: '$CURRENT_USER' } },
      sort: [{ field: 'title', order: 'desc' }],
      limit: 2,
      offset: 4,
      fields: ['title'],
    })
    expect(await crudRead.run(config, { ...ctx, services })).toEqual({
      records: [{ id: 'a' }, { id: 'b' }],
      count: 2,
      hasMore: true,
    })
    expect(calls).toEqual([
      {
        method: 'find',
        principal: ctx.principal,
        collection: 'tasks',
        args: [
          {
            filter: '{"owner":{"_eq":"$CURRENT_USER"}}',
            sort: [{ field: 'title', order: 'desc' }],
            limit: 2,
            offset: 4,
            fields: ['title'],
          },
        ],
      },
    ])
  })
  it('a refused read is a typed step error', async () => {
    const { ctx } = testContext()
    const { services } = fakeDataServices({
      find: () => {
        throw new AppError('collection_not_found', 'Collection not found')
      },
    })
    await expect(
      crudRead.run(crudRead.configSchema.parse({ collection: 'nope' }), { ...ctx, services }),
    ).rejects.toMatchObject({ code: 'collection_not_found', statusCode: 404, retryable: false })
  })
})
