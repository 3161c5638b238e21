import { z } from 'zod'
import { aiOf, model, prompt, usageOf, whole } from '../ai-step.js'
import { defineOperation } from '../types.js'

const styles = {
  brief: 'Write a brief summary: a few sentences at most.',
  detailed: 'Write a detailed summary covering every main point.',
  bullets: 'Write the summary as a bulleted list, one "- " line per point.',
} as const

/** Text cut to `max` characters (code points), ending in … when cut. */
export function clip(value: string, max: number): string {
  const chars = Array.from(value)
  if (chars.length <= max) return value
  return `${chars
    .slice(0, Math.max(0, max - 1))
    .join('')
    .trimEnd()}…`
}

/** Summarises text in a style; `maxLength` is asked for and then held to (a longer answer is cut, ending in …). */
export const aiSummarize = defineOperation({
  type: 'ai_summarize',
  category: 'ai',
  label: 'AI summarize',
  description:
    'Summarises text: style brief (default), detailed or bullets, at most maxLength characters; output { summary, style, model, provider, tokens, tokensEstimated }.',
  effects: 'writes',
  configSchema: z.strictObject({
    text: prompt().describe('The text to summarise (a template)'),
    style: z.enum(['brief', 'detailed', 'bullets']).default('brief').describe('brief, detailed or bullets'),
    maxLength: whole(1, 100_000).optional().describe('The most characters the summary may have'),
    model: model(),
  }),
  example: { text: '{{$steps.fetch.body.article}}', style: 'bullets', maxLength: 500 },
  async run(config, ctx) {
    const system = [
      'You summarise the text the user gives, in its language. Answer with the summary only.',
      styles[config.style],
    ]
    if (config.maxLength !== undefined) system.push(`Use at most ${config.maxLength} characters.`)
    const result = await aiOf(ctx).chat(
      ctx.principal,
      {
        messages: [
          { role: 'system', content: system.join(' ') },
          { role: 'user', content: config.text },
        ],
        model: config.model,
        temperature: 0.3,
      },
      ctx.signal,
    )
    const summary = result.text.trim()
    return {
      summary: config.maxLength === undefined ? summary : clip(summary, config.maxLength),
      style: config.style,
      ...usageOf(result),
    }
  },
})
