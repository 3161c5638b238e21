import { describe, expect, it } from 'vitest'
import { aiRig } from '../ai-test-rig.js'
import { aiTranslate } from './ai-translate.js'

describe('ai_translate config', () => {
  it('text and targetLanguage are required; sourceLanguage optional', () => {
    const ok = (config: Record<string, unknown>) => aiTranslate.configSchema.safeParse(config).success
    expect(ok({ text: 't', targetLanguage: 'German' })).toBe(true)
    expect(ok({ text: 't' })).toBe(false)
    expect(ok({ text: 't', targetLanguage: '' })).toBe(false)
    expect(ok({ text: 't', targetLanguage: 'de', sourceLanguage: '' })).toBe(true)
  })
})

describe('ai_translate', () => {
  it('detects the source language when none is given', async () => {
    const rig = aiRig('{"translation": "Guten Morgen", "sourceLanguage": "English"}')
    expect(
      await rig.run(aiTranslate, { text: 'Good morning', targetLanguage: 'German', sourceLanguage: '' }),
    ).toMatchObject({ translation: 'Guten Morgen', sourceLanguage: 'English', targetLanguage: 'German' })
    expect(rig.last().system).toMatch(/^Translate the text the user gives into German/)
  })
  it('keeps a given source language; an answer that is no JSON is the translation itself', async () => {
    const rig = aiRig('Bonjour')
    expect(await rig.run(aiTranslate, { text: 'Hello', targetLanguage: 'fr', sourceLanguage: 'en' })).toMatchObject({
      translation: 'Bonjour',
      sourceLanguage: 'en',
      targetLanguage: 'fr',
    })
    expect(rig.last().system).toContain('from en into fr')
  })
})
