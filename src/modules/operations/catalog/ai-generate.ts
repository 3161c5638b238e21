import { z } from 'zod'
import {
  aiOf,
  checkAgainstSchema,
  compileSchema,
  model,
  parseJsonAnswer,
  prompt,
  optionalPrompt,
  provider,
  schemaRefinement,
  usageOf,
  whole,
} from '../ai-step.js'
import { numeric } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'

/**
 * Asks the model for text, or for JSON (`responseFormat: json`, or a `jsonSchema`, which implies it): the
 * answer is parsed, and checked against the schema when one is given (ai_invalid_output when it does not
 * conform). Tokens count against the project's day (docs/ai.md).
 */
export const aiGenerate = defineOperation({
  type: 'ai_generate',
  category: 'ai',
  label: 'AI generate',
  description:
    'Generates text, or JSON checked against a JSON Schema, from a prompt; output { text, data (JSON), model, provider, tokens, tokensEstimated }.',
  effects: 'writes',
  configSchema: z.strictObject({
    userPrompt: prompt().describe('The prompt (a template)'),
    systemPrompt: optionalPrompt().describe('Instructions given before the prompt'),
    model: model(),
    maxTokens: whole(1, 100_000).optional().describe('The most tokens the answer may use'),
    temperature: numeric(z.number().min(0).max(2)).default(0.7).describe('Sampling temperature, 0-2'),
    responseFormat: z.enum(['text', 'json']).default('text').describe('text, or json (the answer parsed as JSON)'),
    jsonSchema: z
      .record(z.string(), z.unknown())
      .superRefine(schemaRefinement)
      .optional()
      .describe('A JSON Schema (draft 2020-12) the JSON answer must match; implies responseFormat json'),
    provider: provider(),
  }),
  example: { userPrompt: 'Write a one-line tagline for {{$trigger.body.product}}', temperature: 0.5, maxTokens: 60 },
  async run(config, ctx) {
    const json = config.responseFormat === 'json' || config.jsonSchema !== undefined
    // Compiled before the call, so a bad schema spends no tokens.
    const validate = config.jsonSchema ? compileSchema(config.jsonSchema) : null
    const system = [config.systemPrompt ?? '']
    if (json) {
      system.push('Answer with a single JSON value and nothing else: no prose, no code fence.')
      if (config.jsonSchema)
        system.push(`The JSON must conform to this JSON Schema:\n${JSON.stringify(config.jsonSchema)}`)
    }
    const systemText = system.filter(Boolean).join('\n\n')
    const result = await aiOf(ctx).chat(
      ctx.principal,
      {
        provider: config.provider,
        messages: [
          ...(systemText ? [{ role: 'system' as const, content: systemText }] : []),
          { role: 'user' as const, content: config.userPrompt },
        ],
        model: config.model,
        maxTokens: config.maxTokens,
        temperature: config.temperature,
        json,
      },
      ctx.signal,
    )
    if (!json) return { text: result.text, ...usageOf(result) }
    const data = parseJsonAnswer(result.text)
    if (data === undefined)
      throw new StepError(
        'ai_invalid_output',
        "The model's answer is not JSON",
        { answer: result.text.slice(0, 500) },
        502,
        true,
      )
    if (validate) checkAgainstSchema(validate, data, result.text)
    return { text: result.text, data, ...usageOf(result) }
  },
})
