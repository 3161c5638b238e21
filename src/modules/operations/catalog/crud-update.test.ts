import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { fakeDataServices } from '../data-ops-fake.js'
import { testContext } from '../test-context.js'
import { crudUpdate } from './crud-update.js'

const ok = (config: Record<string, unknown>) =>
  crudUpdate.configSchema.safeParse({ collection: 'tasks', data: { a: 1 }, ...config }).success
const ids = (n: number) => Array.from({ length: n }, (_, i) => `id${i}`)

describe('crud_update: config', () => {
  it('needs data and exactly one of id, ids or filter', () => {
    expect(ok({ id: 'x' })).toBe(true)
    expect(ok({ ids: ['x'] })).toBe(true)
    expect(ok({ filter: { a: { _eq: 1 } } })).toBe(true)
    expect(ok({})).toBe(false)
    expect(ok({ id: 'x', ids: ['y'] })).toBe(false)
    expect(ok({ id: 'x', filter: {} })).toBe(false)
    expect(crudUpdate.configSchema.safeParse({ collection: 'tasks', id: 'x' }).success).toBe(false)
    expect(ok({ id: 'x', data: [] })).toBe(false)
  })
  it('ids 1-1000; id 1-64 characters', () => {
    expect(ok({ ids: ids(0) })).toBe(false)
    expect(ok({ ids: ids(1) })).toBe(true)
    expect(ok({ ids: ids(1000) })).toBe(true)
    expect(ok({ ids: ids(1001) })).toBe(false)
    expect(ok({ id: '' })).toBe(false)
    expect(ok({ id: 'a'.repeat(64) })).toBe(true)
    expect(ok({ id: 'a'.repeat(65) })).toBe(false)
  })
})

describe('crud_update: run', () => {
  it("by id: one update as the run's principal, no version check; outputs { records, count }", async () => {
    const { ctx } = testContext()
    const { services, calls } = fakeDataServices()
    const out = await crudUpdate.run(
      crudUpdate.configSchema.parse({ collection: 'tasks', id: 'r1', data: { done: true } }),
      { ...ctx, services },
    )
    expect(out).toEqual({ records: [{ id: 'r1', done: true }], count: 1 })
    expect(calls).toEqual([
      { method: 'update', principal: ctx.principal, collection: 'tasks', args: ['r1', { done: true }, null] },
    ])
  })
  it('by filter: the ids the user may read and update, then each', async () => {
    const { ctx } = testContext()
    const { services, calls } = fakeDataServices({ matchingIds: () => ['a', 'b'] })
    const out = await crudUpdate.run(
      crudUpdate.configSchema.parse({ collection: 'tasks', filter: { team: { _eq: 'red' } }, data: { team: 'blue' } }),
      { ...ctx, services },
    )
    expect(out.count).toBe(2)
    expect(calls.map((c) => [c.method, ...c.args.slice(0, 2)])).toEqual([
      ['matchingIds', 'update', { filter: '{"team":{"_eq":"red"}}', ids: undefined }],
      ['update', 'a', { team: 'blue' }],
      ['update', 'b', { team: 'blue' }],
    ])
    expect(calls[0]!.args[2]).toBe(1000)
  })
  it('by ids: an id the user may not update fails the step before anything is written', async () => {
    const { ctx } = testContext()
    const { services, calls } = fakeDataServices({ matchingIds: () => ['a'] })
    const attempt = crudUpdate.run(
      crudUpdate.configSchema.parse({ collection: 'tasks', ids: ['a', 'hidden'], data: { x: 1 } }),
      { ...ctx, services },
    )
    await expect(attempt).rejects.toMatchObject({
      code: 'record_not_found',
      statusCode: 404,
      retryable: false,
      details: { missing: 1 },
    })
    expect(calls.map((c) => c.method)).toEqual(['matchingIds'])
  })
  it("too many matches is the service's invalid_request, typed", async () => {
    const { ctx } = testContext()
    const { services } = fakeDataServices({
      matchingIds: () => {
        throw new AppError('invalid_request', 'More than 1000 records match; narrow the filter')
      },
    })
    await expect(
      crudUpdate.run(crudUpdate.configSchema.parse({ collection: 'tasks', filter: {}, data: { x: 1 } }), {
        ...ctx,
        services,
      }),
    ).rejects.toMatchObject({ code: 'invalid_request', statusCode: 400 })
  })
})
