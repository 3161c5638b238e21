import { z } from 'zod'
import { aiOf, jsonObjectAnswer, model, prompt, provider, usageOf } from '../ai-step.js'
import { text } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'

/** Reads the model's scores: a number per label (0-1), matched to the labels without regard to case; a bare `label` scores 1. */
export function scoresOf(answer: Record<string, unknown>, labels: readonly string[]): Record<string, number> {
  const byKey = new Map(labels.map((label) => [label.trim().toLowerCase(), label]))
  const scores: Record<string, number> = Object.fromEntries(labels.map((label) => [label, 0]))
  const given =
    typeof answer.scores === 'object' && answer.scores !== null && !Array.isArray(answer.scores)
      ? (answer.scores as Record<string, unknown>)
      : {}
  for (const [key, value] of Object.entries(given)) {
    const label = byKey.get(key.trim().toLowerCase())
    const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN
    if (label !== undefined && Number.isFinite(n)) scores[label] = Math.min(1, Math.max(0, n))
  }
  const named = typeof answer.label === 'string' ? byKey.get(answer.label.trim().toLowerCase()) : undefined
  if (named !== undefined && Object.values(scores).every((s) => s === 0)) {
    const confidence =
      typeof answer.confidence === 'number' && Number.isFinite(answer.confidence)
        ? Math.min(1, Math.max(0, answer.confidence))
        : 1
    scores[named] = confidence
  }
  return scores
}

const round = (n: number) => Math.round(n * 10_000) / 10_000

/**
 * Classifies text into one of `labels`: the model scores every label, the scores are normalised to sum to
 * 1, and the best is `label` with its score as `confidence` (ties go to the label listed first).
 */
export const aiClassify = defineOperation({
  type: 'ai_classify',
  category: 'ai',
  label: 'AI classify',
  description:
    'Classifies text into one of the labels; output { label, confidence, scores (per label, summing to 1), model, provider, tokens, tokensEstimated }.',
  effects: 'writes',
  configSchema: z.strictObject({
    text: prompt().describe('The text to classify (a template)'),
    labels: z
      .array(text(200, 1))
      .min(2, 'At least 2 labels')
      .max(100)
      .refine(
        (labels) => new Set(labels.map((l) => l.trim().toLowerCase())).size === labels.length,
        'labels must differ (case is ignored)',
      )
      .describe('The labels to choose from (at least 2)'),
    model: model(),
    provider: provider(),
  }),
  example: { text: '{{$trigger.body.message}}', labels: ['billing', 'bug', 'feature request', 'other'] },
  async run(config, ctx) {
    const system = [
      'You classify text. Choose exactly one label from this list, spelled as given:',
      JSON.stringify(config.labels),
      'Answer with a JSON object and nothing else: {"label": "<the best label>", "scores": {"<label>": <probability from 0 to 1>, ...}} with a score for every label, the scores summing to 1.',
    ].join('\n')
    const result = await aiOf(ctx).chat(
      ctx.principal,
      {
        provider: config.provider,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: config.text },
        ],
        model: config.model,
        temperature: 0,
        json: true,
      },
      ctx.signal,
    )
    const scores = scoresOf(jsonObjectAnswer(result.text, 'ai_classify'), config.labels)
    const total = Object.values(scores).reduce((a, n) => a + n, 0)
    if (total <= 0)
      throw new StepError(
        'ai_invalid_output',
        "The model's answer scores none of the labels",
        { answer: result.text.slice(0, 500) },
        502,
        true,
      )
    let label = config.labels[0]!
    for (const candidate of config.labels) if (scores[candidate]! > scores[label]!) label = candidate
    const normalised = Object.fromEntries(config.labels.map((l) => [l, round(scores[l]! / total)]))
    return { label, confidence: normalised[label]!, scores: normalised, ...usageOf(result) }
  },
})
