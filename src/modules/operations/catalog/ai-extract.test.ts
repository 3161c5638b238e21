import { describe, expect, it } from 'vitest'
import { aiRig, failureOf } from '../ai-test-rig.js'
import { aiExtract, isJsonSchema } from './ai-extract.js'

describe('ai_extract config', () => {
  it('text and a non-empty schema are required; a JSON Schema must compile', () => {
    const ok = (config: Record<string, unknown>) => aiExtract.configSchema.safeParse(config).success
    expect(ok({ text: 't', schema: { name: 'the name' } })).toBe(true)
    expect(ok({ text: 't' })).toBe(false)
    expect(ok({ text: 't', schema: {} })).toBe(false)
    expect(ok({ schema: { name: 'x' } })).toBe(false)
    expect(ok({ text: 't', schema: { type: 'object', properties: { a: { type: 'wrong' } } } })).toBe(false)
    expect(ok({ text: 't', schema: { name: 'x' }, instructions: 'Dates as ISO 8601' })).toBe(true)
  })
})

describe('ai_extract', () => {
  it('a field map: the answer keeps exactly those fields, null where missing', async () => {
    const rig = aiRig('{"name": "Ann Lee", "extra": true}')
    const output = await rig.run(aiExtract, {
      text: 'Hi, Ann Lee here',
      schema: { name: 'full name', order: 'order number' },
      instructions: 'Be exact.',
    })
    expect(output).toMatchObject({ data: { name: 'Ann Lee', order: null }, provider: 'cloudflare', tokens: 10 })
    expect(rig.last().system).toContain('{"name":"full name","order":"order number"}')
    expect(rig.last().system).toContain('Be exact.')
  })
  it('a JSON Schema: a matching answer is data; one that does not match is ai_invalid_output', async () => {
    const schema = { type: 'object', required: ['total'], properties: { total: { type: 'number' } } }
    expect(isJsonSchema(schema)).toBe(true)
    expect((await aiRig('{"total": 12.5}').run(aiExtract, { text: 't', schema })).data).toEqual({ total: 12.5 })
    expect(await failureOf(aiRig('{"total": "twelve"}').run(aiExtract, { text: 't', schema }))).toMatchObject({
      code: 'ai_invalid_output',
      details: { errors: [{ path: '/total', message: 'must be number' }] },
    })
    expect(await failureOf(aiRig('[1]').run(aiExtract, { text: 't', schema }))).toMatchObject({
      code: 'ai_invalid_output',
    })
  })
})
