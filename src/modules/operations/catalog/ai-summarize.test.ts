import { describe, expect, it } from 'vitest'
import { aiRig } from '../ai-test-rig.js'
import { aiSummarize, clip } from './ai-summarize.js'

describe('ai_summarize config', () => {
  it('text required; style brief (default), detailed, bullets; maxLength a whole number from 1', () => {
    const ok = (config: Record<string, unknown>) => aiSummarize.configSchema.safeParse({ text: 't', ...config }).success
    expect(aiSummarize.configSchema.parse({ text: 't' })).toEqual({ text: 't', style: 'brief' })
    expect(ok({ style: 'bullets' })).toBe(true)
    expect(ok({ style: 'long' })).toBe(false)
    expect(ok({ maxLength: 0 })).toBe(false)
    expect(ok({ maxLength: 1 })).toBe(true)
    expect(ok({ maxLength: 2.5 })).toBe(false)
    expect(ok({ provider: 'openai' })).toBe(false)
  })
})

describe('ai_summarize', () => {
  it('asks for the style and length, and holds the summary to maxLength characters', async () => {
    const rig = aiRig('  - one\n- two\n- three  ')
    expect(await rig.run(aiSummarize, { text: 'long text', style: 'bullets' })).toMatchObject({
      summary: '- one\n- two\n- three',
      style: 'bullets',
    })
    expect(rig.last().system).toMatch(/bulleted list/)
    const short = aiRig('This summary is far too long for the limit.')
    const output = await short.run(aiSummarize, { text: 'long text', maxLength: 12 })
    expect(output.summary).toBe('This summar…')
    expect(Array.from(output.summary as string)).toHaveLength(12)
    expect(short.last().system).toContain('at most 12 characters')
  })
  it('clip counts characters, not UTF-16 units', () => {
    expect(clip('😀😀😀😀', 3)).toBe('😀😀…')
    expect(clip('abc', 3)).toBe('abc')
  })
})
