import { describe, expect, it } from 'vitest'
import { testContext } from '../test-context.js'
import { setVariable } from './set-variable.js'

const safe = (config: Record<string, unknown>) => setVariable.configSchema.safeParse(config).success

describe('set_variable', () => {
  it('outputs the value itself (read as $steps.<step key>), any JSON', async () => {
    const { ctx } = testContext()
    for (const value of [{ a: [1, 2] }, [1], 'text', 0, false, null])
      expect(await setVariable.run(setVariable.configSchema.parse({ key: 'v', value }), ctx)).toEqual(value)
  })
  it('key is 1-100 characters; key and value are required; nothing else is accepted', () => {
    expect(safe({ key: '', value: 1 })).toBe(false)
    expect(safe({ key: 'k', value: 1 })).toBe(true)
    expect(safe({ key: 'k'.repeat(100), value: 1 })).toBe(true)
    expect(safe({ key: 'k'.repeat(101), value: 1 })).toBe(false)
    expect(safe({ key: 'k' })).toBe(false)
    expect(safe({ value: 1 })).toBe(false)
    expect(safe({ key: 'k', value: 1, vaule: 2 })).toBe(false)
  })
})
