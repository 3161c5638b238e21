import { describe, expect, it } from 'vitest'
import { testContext } from '../test-context.js'
import { jsonParse, maxJsonTextLength } from './json-parse.js'

const run = async (config: Record<string, unknown>) => {
  const { ctx, lines } = testContext()
  return { out: await jsonParse.run(jsonParse.configSchema.parse(config), ctx), lines }
}

describe('json_parse', () => {
  it.each([
    ['an object', '{"a":{"b":[1,{"c":"x"}]}}', undefined, { a: { b: [1, { c: 'x' }] } }],
    ['a list', '[1,2]', undefined, [1, 2]],
    ['a scalar', ' 42 ', undefined, 42],
    ['null', 'null', undefined, null],
    ['a dot path', '{"a":{"b":[1,{"c":"x"}]}}', 'a.b.1.c', 'x'],
    ['a bracket path', '{"a":{"b":[1,{"c":"x"}]}}', 'a.b[1].c', 'x'],
    ['a quoted key', '{"first name":"Ada"}', '["first name"]', 'Ada'],
    ['an empty path: the value', '[1]', '', [1]],
  ])('parses %s', async (_name, input, path, result) => {
    expect((await run({ input, ...(path === undefined ? {} : { path }) })).out).toEqual({ result })
  })
  it('takes a value a whole-value template gave as it is', async () => {
    expect((await run({ input: { a: [1, 2] }, path: 'a.1' })).out).toEqual({ result: 2 })
  })
  it('a path that finds nothing gives null and a warning', async () => {
    const { out, lines } = await run({ input: '{"a":1}', path: 'a.b' })
    expect(out).toEqual({ result: null })
    expect(lines).toEqual([{ level: 'warn', message: expect.stringMatching(/nothing at a\.b/) }])
  })
  it('never reads the prototype', async () => {
    expect(jsonParse.configSchema.safeParse({ input: '{}', path: '__proto__' }).success).toBe(false)
    expect(jsonParse.configSchema.safeParse({ input: '{}', path: 'a.constructor' }).success).toBe(false)
    expect((await run({ input: '{"a":{}}', path: 'a.toString' })).out).toEqual({ result: null })
  })
  it('fails with json_parse_failed on text that is not JSON, not retried', async () => {
    await expect(run({ input: '{"a":' })).rejects.toMatchObject({
      code: 'json_parse_failed',
      retryable: false,
      message: expect.stringMatching(/not JSON/),
    })
    await expect(run({ input: '' })).rejects.toMatchObject({ code: 'json_parse_failed' })
  })
  it(`reads at most ${maxJsonTextLength} characters`, async () => {
    const big = `"${'x'.repeat(maxJsonTextLength - 2)}"`
    expect(((await run({ input: big })).out as { result: string }).result).toHaveLength(maxJsonTextLength - 2)
    await expect(run({ input: `${big} ` })).rejects.toMatchObject({
      code: 'json_parse_failed',
      message: expect.stringMatching(/longer than/),
    })
  })
  it('config: input required, path 0-500 characters', () => {
    expect(jsonParse.configSchema.safeParse({}).success).toBe(false)
    expect(jsonParse.configSchema.safeParse({ input: '1', path: `a${'.b'.repeat(249)}a` }).success).toBe(true)
    expect(jsonParse.configSchema.safeParse({ input: '1', path: 'a'.repeat(501) }).success).toBe(false)
    expect(jsonParse.configSchema.safeParse({ input: '1', path: 'a..b' }).success).toBe(false)
    expect(jsonParse.configSchema.safeParse({ input: '1', other: 1 }).success).toBe(false)
  })
})
