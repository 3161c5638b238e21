import { describe, expect, it } from 'vitest'
import { aiRig, failureOf } from '../ai-test-rig.js'
import { StepError } from '../types.js'
import { aiGenerate } from './ai-generate.js'

const ok = (config: Record<string, unknown>) =>
  aiGenerate.configSchema.safeParse({ userPrompt: 'hi', ...config }).success

describe('ai_generate config', () => {
  it('userPrompt is required; temperature 0-2 (0.7); responseFormat text (default) or json; provider cloudflare or openai', () => {
    expect(aiGenerate.configSchema.safeParse({}).success).toBe(false)
    expect(ok({ userPrompt: '' })).toBe(false)
    expect(aiGenerate.configSchema.parse({ userPrompt: 'hi' })).toEqual({
      userPrompt: 'hi',
      temperature: 0.7,
      responseFormat: 'text',
    })
    for (const [temperature, valid] of [
      [-0.01, false],
      [0, true],
      [2, true],
      [2.01, false],
      ['1.5', true],
    ] as const)
      expect(ok({ temperature }), String(temperature)).toBe(valid)
    expect(ok({ responseFormat: 'json' })).toBe(true)
    expect(ok({ responseFormat: 'xml' })).toBe(false)
    expect(ok({ provider: 'openai' })).toBe(true)
    expect(ok({ provider: 'anthropic' })).toBe(false)
    expect(ok({ maxTokens: 0 })).toBe(false)
    expect(ok({ maxTokens: 1 })).toBe(true)
    expect(ok({ model: '@cf/meta/llama-3.1-8b-instruct' })).toBe(true)
    expect(ok({ model: '../x' })).toBe(false)
    expect(ok({ prompt: 'x' })).toBe(false)
  })
  it('a jsonSchema that does not compile, or holds a pattern RE2 cannot run, is refused when saved', () => {
    expect(ok({ jsonSchema: { type: 'object', properties: { a: { type: 'string' } } } })).toBe(true)
    expect(ok({ jsonSchema: { type: 'nonsense' } })).toBe(false)
    expect(ok({ jsonSchema: { type: 'string', pattern: '(a)\\1' } })).toBe(false)
    expect(ok({ jsonSchema: { type: 'object', patternProperties: { '(?=x)': {} } } })).toBe(false)
    // Patterns run on RE2 (linear time), so the shapes that backtrack for ever are accepted.
    expect(ok({ jsonSchema: { type: 'string', pattern: '(a+)+$' } })).toBe(true)
    expect(ok({ jsonSchema: { $ref: 'https://example.com/schema.json' } })).toBe(false)
  })
})

describe('ai_generate', () => {
  it('text: sends the system and user prompts with the model, maxTokens and temperature; outputs the text and usage', async () => {
    const rig = aiRig('A tagline.')
    const output = await rig.run(aiGenerate, {
      userPrompt: 'Write a tagline',
      systemPrompt: 'You write copy.',
      maxTokens: 30,
      temperature: 0.4,
      model: 'm1',
      provider: 'openai',
    })
    expect(output).toEqual({ text: 'A tagline.', model: 'm1', provider: 'openai', tokens: 10, tokensEstimated: false })
    expect(rig.chats[0]).toEqual({
      provider: 'openai',
      messages: [
        { role: 'system', content: 'You write copy.' },
        { role: 'user', content: 'Write a tagline' },
      ],
      model: 'm1',
      maxTokens: 30,
      temperature: 0.4,
      json: false,
    })
  })
  it('json: parses the answer (also from a code fence) into data', async () => {
    const rig = aiRig('```json\n{"title": "Hi"}\n```')
    const output = await rig.run(aiGenerate, { userPrompt: 'x', responseFormat: 'json' })
    expect(output.data).toEqual({ title: 'Hi' })
    expect(rig.last().json).toBe(true)
    expect(rig.last().system).toMatch(/single JSON value/)
  })
  it('jsonSchema: a conforming answer passes; one that does not is ai_invalid_output naming the problem', async () => {
    const jsonSchema = {
      type: 'object',
      required: ['title', 'tags'],
      properties: { title: { type: 'string', maxLength: 20 }, tags: { type: 'array', items: { type: 'string' } } },
      additionalProperties: false,
    }
    const good = aiRig('{"title": "Hi", "tags": ["a"]}')
    expect((await good.run(aiGenerate, { userPrompt: 'x', jsonSchema })).data).toEqual({ title: 'Hi', tags: ['a'] })
    expect(good.last().system).toContain(JSON.stringify(jsonSchema))
    const bad = aiRig('{"title": 42}')
    const err = await failureOf(bad.run(aiGenerate, { userPrompt: 'x', jsonSchema }))
    expect(err).toBeInstanceOf(StepError)
    expect(err).toMatchObject({ code: 'ai_invalid_output', retryable: true })
    expect(err.message).toMatch(/does not match the JSON Schema/)
    expect(err.details.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: '/title', message: 'must be string' })]),
    )
  })
  it('an answer that is no JSON is ai_invalid_output', async () => {
    const err = await failureOf(aiRig('Sure! Here it is.').run(aiGenerate, { userPrompt: 'x', responseFormat: 'json' }))
    expect(err).toMatchObject({ code: 'ai_invalid_output' })
  })
  it('a templated schema that resolves to one that does not compile fails before any call (no tokens)', async () => {
    const rig = aiRig()
    const direct = await failureOf(
      aiGenerate.run(
        { userPrompt: 'x', temperature: 0.7, responseFormat: 'text', jsonSchema: { type: 'nonsense' } },
        rig.ctx,
      ),
    )
    expect(direct).toMatchObject({ code: 'ai_invalid_schema', retryable: false })
    const backtracking = await failureOf(
      aiGenerate.run(
        {
          userPrompt: 'x',
          temperature: 0.7,
          responseFormat: 'text',
          jsonSchema: { type: 'string', pattern: '(a|aa)\\1' },
        },
        rig.ctx,
      ),
    )
    expect(backtracking).toMatchObject({ code: 'ai_invalid_schema' })
    expect(rig.chats).toHaveLength(0)
  })
})
