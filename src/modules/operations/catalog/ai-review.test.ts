import { describe, expect, it } from 'vitest'
import { aiRig, failureOf } from '../ai-test-rig.js'
import { aiReview, scoreOf } from './ai-review.js'

describe('ai_review config', () => {
  it('content required; criteria a list; threshold 0-1 (0.7)', () => {
    const ok = (config: Record<string, unknown>) => aiReview.configSchema.safeParse({ content: 'c', ...config }).success
    expect(aiReview.configSchema.parse({ content: 'c' })).toEqual({ content: 'c', criteria: [], threshold: 0.7 })
    expect(ok({ threshold: 0 })).toBe(true)
    expect(ok({ threshold: 1 })).toBe(true)
    expect(ok({ threshold: 1.01 })).toBe(false)
    expect(ok({ threshold: -0.1 })).toBe(false)
    expect(ok({ criteria: 'clear' })).toBe(false)
    expect(aiReview.configSchema.safeParse({}).success).toBe(false)
  })
})

describe('ai_review', () => {
  it('outputs score, passed against the threshold, feedback, issues and suggestions', async () => {
    const rig = aiRig(
      '{"score": 0.65, "feedback": "Mostly clear.", "issues": ["typo in line 2"], "suggestions": ["fix the typo"]}',
    )
    const output = await rig.run(aiReview, { content: 'Some text', criteria: ['clear', 'polite'] })
    expect(output).toMatchObject({
      score: 0.65,
      passed: false,
      threshold: 0.7,
      feedback: 'Mostly clear.',
      issues: ['typo in line 2'],
      suggestions: ['fix the typo'],
    })
    expect(rig.last().system).toContain('["clear","polite"]')
    expect(await aiRig('{"score": 8}').run(aiReview, { content: 'x', threshold: 0.8 })).toMatchObject({
      score: 0.8,
      passed: true,
      issues: [],
      suggestions: [],
      feedback: '',
    })
  })
  it('scores: 0-1 as they are, 1-10 and 1-100 brought down; no score is ai_invalid_output', async () => {
    expect([scoreOf(0.5), scoreOf('7'), scoreOf(85), scoreOf(500), scoreOf(-1), scoreOf('x')]).toEqual([
      0.5,
      0.7,
      0.85,
      null,
      null,
      null,
    ])
    expect(await failureOf(aiRig('{"feedback": "fine"}').run(aiReview, { content: 'x' }))).toMatchObject({
      code: 'ai_invalid_output',
    })
  })
})
