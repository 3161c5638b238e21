import { z } from 'zod'
import { aiOf, model, parseJsonAnswer, prompt, usageOf } from '../ai-step.js'
import { text } from '../schema-helpers.js'
import { defineOperation } from '../types.js'

/**
 * Translates text into `targetLanguage`; `sourceLanguage` empty means the model detects it and says which.
 * An answer that is not the JSON asked for is taken as the translation itself (small models often answer so).
 */
export const aiTranslate = defineOperation({
  type: 'ai_translate',
  category: 'ai',
  label: 'AI translate',
  description:
    'Translates text into targetLanguage (sourceLanguage detected when empty); output { translation, sourceLanguage, targetLanguage, model, provider, tokens, tokensEstimated }.',
  effects: 'writes',
  configSchema: z.strictObject({
    text: prompt().describe('The text to translate (a template)'),
    targetLanguage: text(100, 1).describe('The language to translate into (a name or a code: "German", "de")'),
    sourceLanguage: text(100).optional().describe('The language of the text; detected when empty'),
    model: model(),
  }),
  example: { text: '{{$trigger.body.message}}', targetLanguage: 'German' },
  async run(config, ctx) {
    const source = config.sourceLanguage?.trim() || null
    const system = [
      `Translate the text the user gives ${source ? `from ${source} ` : ''}into ${config.targetLanguage}. Keep its meaning, tone and formatting.`,
      'Answer with a JSON object and nothing else: {"translation": "<the translated text>", "sourceLanguage": "<the language of the original, in English>"}.',
    ].join(' ')
    const result = await aiOf(ctx).chat(
      ctx.principal,
      {
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: config.text },
        ],
        model: config.model,
        temperature: 0.2,
        json: true,
      },
      ctx.signal,
    )
    const parsed = parseJsonAnswer(result.text) as { translation?: unknown; sourceLanguage?: unknown } | undefined
    const answered = typeof parsed === 'object' && parsed !== null && typeof parsed.translation === 'string'
    return {
      translation: answered ? (parsed.translation as string) : result.text.trim(),
      sourceLanguage: source ?? (answered && typeof parsed.sourceLanguage === 'string' ? parsed.sourceLanguage : null),
      targetLanguage: config.targetLanguage,
      ...usageOf(result),
    }
  },
})
