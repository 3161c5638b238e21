import { describe, expect, it } from 'vitest'
import { testContext } from '../test-context.js'
import { StepError } from '../types.js'
import { throwError } from './throw-error.js'

const safe = (config: Record<string, unknown>) => throwError.configSchema.safeParse(config).success

describe('throw_error', () => {
  it('throws StepError flow_error with the message and status, not retried', async () => {
    const { ctx } = testContext()
    const attempt = throwError.run(throwError.configSchema.parse({ message: 'Quota reached', statusCode: 429 }), ctx)
    await expect(attempt).rejects.toBeInstanceOf(StepError)
    await expect(attempt).rejects.toMatchObject({
      code: 'flow_error',
      message: 'Quota reached',
      statusCode: 429,
      retryable: false,
      details: {},
    })
  })
  it('statusCode is an integer 100-599, 400 by default; a numeric string is taken', () => {
    expect(throwError.configSchema.parse({ message: 'x' })).toEqual({ message: 'x', statusCode: 400 })
    expect(safe({ message: 'x', statusCode: 99 })).toBe(false)
    expect(safe({ message: 'x', statusCode: 100 })).toBe(true)
    expect(safe({ message: 'x', statusCode: 599 })).toBe(true)
    expect(safe({ message: 'x', statusCode: 600 })).toBe(false)
    expect(safe({ message: 'x', statusCode: 404.5 })).toBe(false)
    expect(throwError.configSchema.parse({ message: 'x', statusCode: '503' }).statusCode).toBe(503)
  })
  it('message is 1-2000 characters and required', () => {
    expect(safe({})).toBe(false)
    expect(safe({ message: '' })).toBe(false)
    expect(safe({ message: 'x' })).toBe(true)
    expect(safe({ message: 'x'.repeat(2000) })).toBe(true)
    expect(safe({ message: 'x'.repeat(2001) })).toBe(false)
  })
})
