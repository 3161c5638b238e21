import { z } from 'zod'
import {
  aiOf,
  checkAgainstSchema,
  compileSchema,
  jsonObjectAnswer,
  model,
  prompt,
  optionalPrompt,
  provider,
  usageOf,
} from '../ai-step.js'
import { defineOperation } from '../types.js'

// Keywords that make `schema` a JSON Schema rather than a map of field names to descriptions.
const schemaKeywords = ['type', 'properties', '$schema', '$ref', '$defs', 'allOf', 'anyOf', 'oneOf', 'required']

/** True when `schema` is a JSON Schema (it uses one of the schema keywords at its top). */
export function isJsonSchema(schema: Record<string, unknown>): boolean {
  return schemaKeywords.some((keyword) => keyword in schema)
}

/**
 * Extracts structured data from text. `schema` is either a JSON Schema (draft 2020-12: the answer must
 * match it, ai_invalid_output when it does not) or a map of field names to descriptions
 * (`{ "name": "the customer's full name" }`: the answer keeps those fields, null where the text has none).
 */
export const aiExtract = defineOperation({
  type: 'ai_extract',
  category: 'ai',
  label: 'AI extract',
  description:
    'Extracts fields from text as JSON: a JSON Schema the answer must match, or a map of field names to descriptions; output { data, model, provider, tokens, tokensEstimated }.',
  effects: 'writes',
  configSchema: z.strictObject({
    text: prompt().describe('The text to read (a template)'),
    schema: z
      .record(z.string(), z.unknown())
      .refine(
        (value) => Object.keys(value).length > 0,
        'Required: a JSON Schema, or field names with their descriptions',
      )
      .superRefine((value, refinement) => {
        if (!isJsonSchema(value) || JSON.stringify(value).includes('{{')) return
        try {
          compileSchema(value)
        } catch (err) {
          refinement.addIssue({ code: 'custom', message: (err as Error).message })
        }
      })
      .describe('A JSON Schema, or { field: description }'),
    instructions: optionalPrompt().describe('Further instructions'),
    model: model(),
    provider: provider(),
  }),
  example: {
    text: '{{$trigger.body.email}}',
    schema: { name: "the sender's full name", orderNumber: 'the order number, if any' },
  },
  async run(config, ctx) {
    const jsonSchema = isJsonSchema(config.schema)
    const validate = jsonSchema ? compileSchema(config.schema) : null
    const fields = jsonSchema ? null : Object.keys(config.schema)
    const system = [
      'You extract data from the text the user gives. Answer with a JSON object and nothing else: no prose, no code fence.',
      jsonSchema
        ? `The object must conform to this JSON Schema:\n${JSON.stringify(config.schema)}`
        : `The object has exactly these fields (use null where the text does not say):\n${JSON.stringify(config.schema)}`,
      config.instructions ?? '',
    ]
      .filter(Boolean)
      .join('\n\n')
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
    const answer = jsonObjectAnswer(result.text, 'ai_extract')
    if (validate) {
      checkAgainstSchema(validate, answer, result.text)
      return { data: answer, ...usageOf(result) }
    }
    return { data: Object.fromEntries(fields!.map((field) => [field, answer[field] ?? null])), ...usageOf(result) }
  },
})
