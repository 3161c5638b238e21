import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { fakeDataServices } from '../data-ops-fake.js'
import { testContext } from '../test-context.js'
import { crudDelete } from './crud-delete.js'

const ok = (config: Record<string, unknown>) =>
  crudDelete.configSchema.safeParse({ collection: 'tasks', ...config }).success
const ids = (n: number) => Array.from({ length: n }, (_, i) => `id${i}`)

describe('crud_delete: config', () => {
  it('exactly one of id, ids or filter; permanent defaults to false', () => {
    expect(crudDelete.configSchema.parse({ collection: 'tasks', id: 'x' })).toEqual({
      collection: 'tasks',
      id: 'x',
      permanent: false,
    })
    expect(ok({})).toBe(false)
    expect(ok({ id: 'x', filter: {} })).toBe(false)
    expect(ok({ filter: {} })).toBe(true)
    expect(ok({ id: 'x', permanent: 'yes' })).toBe(false)
  })
  it('ids 1-1000', () => {
    expect(ok({ ids: ids(0) })).toBe(false)
    expect(ok({ ids: ids(1) })).toBe(true)
    expect(ok({ ids: ids(1000) })).toBe(true)
    expect(ok({ ids: ids(1001) })).toBe(false)
  })
})

describe('crud_delete: run', () => {
  it("by id: the single delete as the run's principal, soft or permanent; outputs { ids, count }", async () => {
    const { ctx } = testContext()
    const { services, calls } = fakeDataServices()
    expect(
      await crudDelete.run(crudDelete.configSchema.parse({ collection: 'tasks', id: 'r1', permanent: true }), {
        ...ctx,
        services,
      }),
    ).toEqual({ ids: ['r1'], count: 1 })
    expect(calls).toEqual([{ method: 'delete', principal: ctx.principal, collection: 'tasks', args: ['r1', true] }])
  })
  it('by ids: checked first, then bulk deletes of at most 200', async () => {
    const { ctx } = testContext()
    const { services, calls } = fakeDataServices()
    const out = await crudDelete.run(crudDelete.configSchema.parse({ collection: 'tasks', ids: ids(250) }), {
      ...ctx,
      services,
    })
    expect(out.count).toBe(250)
    expect(
      calls.map((c) => [c.method, c.method === 'bulkDelete' ? (c.args[0] as string[]).length : c.args[0], c.args[1]]),
    ).toEqual([
      ['matchingIds', 'delete', { filter: undefined, ids: ids(250) }],
      ['bulkDelete', 200, false],
      ['bulkDelete', 50, false],
    ])
  })
  it('a missing record by id is record_not_found, typed', async () => {
    const { ctx } = testContext()
    const { services } = fakeDataServices({
      delete: () => {
        throw new AppError('record_not_found', 'Record not found')
      },
    })
    await expect(
      crudDelete.run(crudDelete.configSchema.parse({ collection: 'tasks', id: 'zz' }), { ...ctx, services }),
    ).rejects.toMatchObject({ code: 'record_not_found', statusCode: 404 })
  })
  it('by ids: one the user may not delete fails the step and deletes nothing', async () => {
    const { ctx } = testContext()
    const { services, calls } = fakeDataServices({ matchingIds: () => ['id0'] })
    await expect(
      crudDelete.run(crudDelete.configSchema.parse({ collection: 'tasks', ids: ids(2) }), { ...ctx, services }),
    ).rejects.toMatchObject({ code: 'record_not_found' })
    expect(calls.map((c) => c.method)).toEqual(['matchingIds'])
  })
})
