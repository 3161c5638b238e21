import { describe, expect, it } from 'vitest'
import { testContext } from '../test-context.js'
import { log } from './log.js'

const safe = (config: Record<string, unknown>) => log.configSchema.safeParse(config).success

describe('log', () => {
  it('writes a line to the step log at its level and outputs it', async () => {
    for (const level of ['info', 'warn', 'error', 'debug'] as const) {
      const { ctx, lines } = testContext()
      expect(await log.run(log.configSchema.parse({ message: 'hello', level }), ctx)).toEqual({
        message: 'hello',
        level,
      })
      expect(lines).toEqual([{ level, message: 'hello' }])
    }
  })
  it('defaults to info and writes objects as JSON, numbers as written', async () => {
    const { ctx, lines } = testContext()
    expect(await log.run(log.configSchema.parse({ message: { a: 1 } }), ctx)).toEqual({
      message: '{"a":1}',
      level: 'info',
    })
    expect(await log.run(log.configSchema.parse({ message: 12.5 }), ctx)).toEqual({ message: '12.5', level: 'info' })
    expect(lines.map((l) => l.message)).toEqual(['{"a":1}', '12.5'])
  })
  it('message is up to 10000 characters (required, may be empty); level is one of four', () => {
    expect(safe({ message: '' })).toBe(true)
    expect(safe({ message: 'x'.repeat(10_000) })).toBe(true)
    expect(safe({ message: 'x'.repeat(10_001) })).toBe(false)
    expect(safe({})).toBe(false)
    expect(safe({ message: 'x', level: 'trace' })).toBe(false)
    expect(safe({ message: 'x', mesage: 'typo' })).toBe(false)
  })
})
