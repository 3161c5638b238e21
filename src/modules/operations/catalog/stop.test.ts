import { describe, expect, it } from 'vitest'
import { testContext } from '../test-context.js'
import { StopRun } from '../types.js'
import { stop } from './stop.js'

const safe = (config: Record<string, unknown>) => stop.configSchema.safeParse(config).success

describe('stop', () => {
  it('throws StopRun with its status and message', async () => {
    const { ctx } = testContext()
    await expect(stop.run(stop.configSchema.parse({}), ctx)).rejects.toEqual(
      new StopRun('success', 'Flow execution stopped'),
    )
    const attempt = stop.run(stop.configSchema.parse({ status: 'error', message: 'Not allowed' }), ctx)
    await expect(attempt).rejects.toBeInstanceOf(StopRun)
    await expect(attempt).rejects.toMatchObject({ status: 'error', message: 'Not allowed' })
  })
  it('status is success (default) or error; message up to 2000 characters', () => {
    expect(stop.configSchema.parse({})).toEqual({ status: 'success', message: 'Flow execution stopped' })
    expect(safe({ status: 'failed' })).toBe(false)
    expect(safe({ message: 'x'.repeat(2000) })).toBe(true)
    expect(safe({ message: 'x'.repeat(2001) })).toBe(false)
    expect(safe({ message: '' })).toBe(true)
    expect(safe({ reason: 'x' })).toBe(false)
  })
})
