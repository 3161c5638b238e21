import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { fakeDataServices } from '../data-ops-fake.js'
import { testContext } from '../test-context.js'
import { StepError } from '../types.js'
import { crudCreate } from './crud-create.js'

const ok = (config: unknown) => crudCreate.configSchema.safeParse(config).success
const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ title: `t${i}` }))

describe('crud_create: config', () => {
  it('collection 1-100 characters, required', () => {
    expect(ok({ collection: '', data: {} })).toBe(false)
    expect(ok({ collection: 'a', data: {} })).toBe(true)
    expect(ok({ collection: 'a'.repeat(100), data: {} })).toBe(true)
    expect(ok({ collection: 'a'.repeat(101), data: {} })).toBe(false)
    expect(ok({ data: {} })).toBe(false)
  })
  it('data is required: an object, or a list of 1-1000 objects', () => {
    expect(ok({ collection: 'a' })).toBe(false)
    expect(ok({ collection: 'a', data: rows(0) })).toBe(false)
    expect(ok({ collection: 'a', data: rows(1) })).toBe(true)
    expect(ok({ collection: 'a', data: rows(1000) })).toBe(true)
    expect(ok({ collection: 'a', data: rows(1001) })).toBe(false)
    expect(ok({ collection: 'a', data: 'text' })).toBe(false)
    expect(ok({ collection: 'a', data: [1] })).toBe(false)
  })
  it('refuses an unknown key', () => {
    expect(ok({ collection: 'a', data: {}, dat: {} })).toBe(false)
  })
})

describe('crud_create: run', () => {
  it("creates one record as the run's principal and outputs { record }", async () => {
    const { ctx } = testContext()
    const { services, calls } = fakeDataServices()
    const out = await crudCreate.run(crudCreate.configSchema.parse({ collection: 'tasks', data: { title: 'x' } }), {
      ...ctx,
      services,
    })
    expect(out).toEqual({ record: { id: 'r1', title: 'x' } })
    expect(calls).toEqual([{ method: 'create', principal: ctx.principal, collection: 'tasks', args: [{ title: 'x' }] }])
  })
  it('creates each of a list in order and outputs { records, count }', async () => {
    const { ctx } = testContext()
    const { services, calls } = fakeDataServices()
    const out = await crudCreate.run(crudCreate.configSchema.parse({ collection: 'tasks', data: rows(3) }), {
      ...ctx,
      services,
    })
    expect(out).toEqual({
      records: [
        { id: 'r1', title: 't0' },
        { id: 'r2', title: 't1' },
        { id: 'r3', title: 't2' },
      ],
      count: 3,
    })
    expect(calls.map((c) => c.args[0])).toEqual(rows(3))
  })
  it("a refusal is a typed step error with the API's code and status, not retried; in a list it names the item and what was created", async () => {
    const { ctx } = testContext()
    let n = 0
    const { services } = fakeDataServices({
      create: (body: Record<string, unknown>) => {
        if (++n === 2) throw new AppError('forbidden', 'You may not create tasks', { resource: 'collections/tasks' })
        return { id: 'x', ...body }
      },
    })
    const attempt = crudCreate.run(crudCreate.configSchema.parse({ collection: 'tasks', data: rows(3) }), {
      ...ctx,
      services,
    })
    await expect(attempt).rejects.toBeInstanceOf(StepError)
    await expect(attempt).rejects.toMatchObject({
      code: 'forbidden',
      statusCode: 403,
      retryable: false,
      message: 'data[1]: You may not create tasks',
      details: { resource: 'collections/tasks', index: 1, created: 1 },
    })
  })
  it('a server-side failure (5xx) may be retried', async () => {
    const { ctx } = testContext()
    const { services } = fakeDataServices({
      create: () => {
        throw new AppError('internal', 'boom')
      },
    })
    await expect(
      crudCreate.run(crudCreate.configSchema.parse({ collection: 'tasks', data: {} }), { ...ctx, services }),
    ).rejects.toMatchObject({ code: 'internal', statusCode: 500, retryable: true })
  })
})
