import { describe, expect, it } from 'vitest'
import { aiRig, failureOf } from '../ai-test-rig.js'
import { aiClassify, scoresOf } from './ai-classify.js'

describe('ai_classify config', () => {
  it('text and at least 2 distinct labels are required', () => {
    const ok = (config: Record<string, unknown>) => aiClassify.configSchema.safeParse(config).success
    expect(ok({ text: 't', labels: ['a', 'b'] })).toBe(true)
    expect(ok({ text: 't', labels: ['a'] })).toBe(false)
    expect(ok({ text: 't', labels: [] })).toBe(false)
    expect(ok({ labels: ['a', 'b'] })).toBe(false)
    expect(ok({ text: 't', labels: ['a', 'A'] })).toBe(false)
    expect(ok({ text: 't', labels: ['a', ''] })).toBe(false)
    expect(ok({ text: 't', labels: ['a', 'b'], provider: 'openai', model: 'x' })).toBe(true)
  })
})

describe('ai_classify', () => {
  it('asks for a score per label; outputs the best label, its confidence and the scores normalised to 1', async () => {
    const rig = aiRig('{"label": "bug", "scores": {"billing": 0.1, "Bug": 0.6, "other": 0.1}}')
    const output = await rig.run(aiClassify, { text: 'The app crashes', labels: ['billing', 'bug', 'other'] })
    expect(output).toMatchObject({
      label: 'bug',
      confidence: 0.75,
      scores: { billing: 0.125, bug: 0.75, other: 0.125 },
      tokens: 10,
    })
    expect(rig.last()).toMatchObject({ user: 'The app crashes', temperature: 0, json: true })
    expect(rig.last().system).toContain('["billing","bug","other"]')
  })
  it('a bare label with a confidence counts; unknown labels are ignored; none scored is ai_invalid_output', async () => {
    expect(scoresOf({ label: 'B ', confidence: 0.9 }, ['a', 'b'])).toEqual({ a: 0, b: 0.9 })
    expect(scoresOf({ scores: { a: '0.5', z: 1, b: 7 } }, ['a', 'b'])).toEqual({ a: 0.5, b: 1 })
    expect(
      await failureOf(aiRig('{"label": "nope"}').run(aiClassify, { text: 't', labels: ['a', 'b'] })),
    ).toMatchObject({ code: 'ai_invalid_output' })
    expect(await failureOf(aiRig('I think it is a').run(aiClassify, { text: 't', labels: ['a', 'b'] }))).toMatchObject({
      code: 'ai_invalid_output',
    })
  })
  it('ties go to the label listed first', async () => {
    expect(
      await aiRig('{"scores": {"a": 0.5, "b": 0.5}}').run(aiClassify, { text: 't', labels: ['b', 'a'] }),
    ).toMatchObject({ label: 'b', confidence: 0.5 })
  })
})
