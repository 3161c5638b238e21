import { z } from 'zod'
import { aiOf, jsonObjectAnswer, model, prompt, usageOf } from '../ai-step.js'
import { numeric, text } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'

/** A score as 0-1: a number or numeric text; 1-10 and 1-100 scales are brought down; anything else is null. */
export function scoreOf(value: unknown): number | null {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN
  if (!Number.isFinite(n) || n < 0) return null
  const scaled = n <= 1 ? n : n <= 10 ? n / 10 : n <= 100 ? n / 100 : null
  return scaled === null ? null : Math.round(scaled * 10_000) / 10_000
}

const texts = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.filter((v) => v !== null && v !== undefined).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
    : []

/** Reviews content against criteria: a score 0-1, feedback, issues and suggestions; `passed` when the score reaches `threshold`. */
export const aiReview = defineOperation({
  type: 'ai_review',
  category: 'ai',
  label: 'AI review',
  description:
    'Reviews content against criteria; output { score (0-1), passed (score ≥ threshold), threshold, feedback, issues, suggestions, model, provider, tokens, tokensEstimated }.',
  effects: 'writes',
  configSchema: z.strictObject({
    content: prompt().describe('The content to review (a template)'),
    criteria: z.array(text(1_000, 1)).max(50).default([]).describe('What to judge it on'),
    threshold: numeric(z.number().min(0).max(1)).default(0.7).describe('The score (0-1) it passes at'),
    model: model(),
  }),
  example: {
    content: '{{$trigger.body.after.body}}',
    criteria: ['clear', 'polite', 'no personal data'],
    threshold: 0.8,
  },
  async run(config, ctx) {
    const system = [
      'You review the content the user gives.',
      config.criteria.length > 0
        ? `Judge it on these criteria: ${JSON.stringify(config.criteria)}.`
        : 'Judge its overall quality.',
      'Answer with a JSON object and nothing else: {"score": <0 to 1>, "feedback": "<one paragraph>", "issues": ["<problem>", ...], "suggestions": ["<improvement>", ...]}.',
    ].join(' ')
    const result = await aiOf(ctx).chat(
      ctx.principal,
      {
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: config.content },
        ],
        model: config.model,
        temperature: 0,
        json: true,
      },
      ctx.signal,
    )
    const answer = jsonObjectAnswer(result.text, 'ai_review')
    const score = scoreOf(answer.score)
    if (score === null)
      throw new StepError(
        'ai_invalid_output',
        "The model's review has no score from 0 to 1",
        { answer: result.text.slice(0, 500) },
        502,
        true,
      )
    return {
      score,
      passed: score >= config.threshold,
      threshold: config.threshold,
      feedback: typeof answer.feedback === 'string' ? answer.feedback : '',
      issues: texts(answer.issues),
      suggestions: texts(answer.suggestions),
      ...usageOf(result),
    }
  },
})
