import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import { parseJsonBounded } from '../../lib/json-bounds.js'
import { z } from 'zod'
import type { Principal } from '../../lib/principal.js'
import { ajvRegExp, checkPattern } from './safe-regex.js'
import { numeric, text } from './schema-helpers.js'
import { StepError, type OperationContext } from './types.js'

/**
 * What the AI operations (ai_generate, ai_classify, ai_extract, ai_summarize, ai_translate, ai_review,
 * ai_image) share: the service they reach as `ctx.services.ai` (the ai module: provider choice, the daily
 * token quota, image files), the config fields they have in common, and reading a model's JSON answer.
 */

export interface AiChatMessage {
  readonly role: 'system' | 'user' | 'assistant'
  readonly content: string
}

export interface AiChatInput {
  /** cloudflare or openai; the server's default provider when absent. */
  readonly provider?: string | undefined
  readonly messages: readonly AiChatMessage[]
  readonly model?: string | undefined
  readonly maxTokens?: number | undefined
  readonly temperature?: number | undefined
  /** The answer should be a JSON object. */
  readonly json?: boolean | undefined
}

/** A completed call; `tokens` were counted against the project's day (`tokensEstimated` when the provider gave no figure). */
export interface AiChatOutput {
  readonly text: string
  readonly model: string
  readonly provider: string
  readonly tokens: number
  readonly tokensEstimated: boolean
}

export interface AiImageInput {
  readonly prompt: string
  readonly model?: string | undefined
  readonly width?: number | undefined
  readonly height?: number | undefined
  /** The stored file's name, without extension (the image type gives it). */
  readonly name: string
}

export interface AiImageOutput {
  readonly file: {
    readonly id: string
    readonly r2Key: string
    readonly filename: string
    readonly mimeType: string
    readonly sizeBytes: number
    readonly visibility: string
  }
  readonly model: string
  readonly provider: string
  readonly tokens: number
  readonly tokensEstimated: boolean
}

/**
 * The AI service as operations use it (the ai module implements it), acting as the run's principal. Each
 * method fails with a StepError: ai_not_configured, ai_quota_exceeded (checked before any call),
 * ai_provider_error (retryable after 408, 429, 5xx), ai_invalid_response, timed_out, network_error; and for
 * images the files service's refusals (forbidden, limit_exceeded, …).
 */
export interface AiSteps {
  chat(principal: Principal, input: AiChatInput, signal: AbortSignal): Promise<AiChatOutput>
  image(principal: Principal, input: AiImageInput, signal: AbortSignal): Promise<AiImageOutput>
}

/** The part of `ctx.services` the AI operations use (wired in app.ts through the automate module). */
export interface AiServices {
  readonly ai: AiSteps
}

/** The run's AI service (a server with no provider configured answers ai_not_configured from it). */
export function aiOf(ctx: OperationContext): AiSteps {
  return ctx.services.ai
}

// ---- Config fields ----

/** A model name as the provider spells it (`@cf/meta/llama-3.1-8b-instruct`, `llama3.1:8b`); the provider's default when absent. */
export const model = () =>
  z
    .string()
    .min(1)
    .max(200)
    .refine(
      (value) => value.split('/').every((s) => /^[A-Za-z0-9@._:-]+$/.test(s) && s !== '.' && s !== '..'),
      'must be a model name: letters, digits and @ . _ : - in parts split by /',
    )
    .optional()
    .describe("The model (the provider's default when empty)")

/** The spec's `provider` (default cloudflare); `openai` is any OpenAI-compatible endpoint. Absent: cloudflare when configured, else openai. */
export const provider = () =>
  z
    .enum(['cloudflare', 'openai'])
    .optional()
    .describe(
      'cloudflare (Workers AI) or openai (any OpenAI-compatible endpoint); the configured one when empty, cloudflare first',
    )

/** Prompt-sized text, required: 1-100,000 characters. */
export const prompt = () => text(100_000, 1)

/** Prompt-sized text, optional: up to 100,000 characters. */
export const optionalPrompt = () => text(100_000).optional()

/** A whole number in a range that a template may give as text. */
export const whole = (min: number, max: number) => numeric(z.number().int().min(min).max(max))

// ---- JSON answers ----

/**
 * A model's answer as JSON: the text itself, else inside a ``` fence, else the outermost `{…}` or `[…]`
 * (small models wrap JSON in prose). Undefined when none parses.
 */
export function parseJsonAnswer(answer: string): unknown {
  const attempts = [answer.trim()]
  const fence = /```(?:json)?\s*([\s\S]*?)```/i.exec(answer)
  if (fence?.[1]) attempts.push(fence[1].trim())
  for (const [open, close] of [
    ['{', '}'],
    ['[', ']'],
  ] as const) {
    const start = answer.indexOf(open)
    const end = answer.lastIndexOf(close)
    if (start !== -1 && end > start) attempts.push(answer.slice(start, end + 1))
  }
  for (const attempt of attempts) {
    try {
      return parseJsonBounded(attempt)
    } catch {
      // next
    }
  }
  return undefined
}

/** A JSON answer that must be an object; ai_invalid_output (retryable: the next answer may be right) when it is not. */
export function jsonObjectAnswer(answer: string, what: string): Record<string, unknown> {
  const parsed = parseJsonAnswer(answer)
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new StepError(
      'ai_invalid_output',
      `The model's answer is not the JSON object ${what} asks for`,
      { answer: answer.slice(0, 500) },
      502,
      true,
    )
  }
  return parsed as Record<string, unknown>
}

// ---- JSON Schema ----

const maxSchemaChars = 50_000
const maxSchemaDepth = 32

/** Problems that make a JSON Schema unusable here: too big, too deep, a `pattern` whose shape may backtrack for ever. Null when fine. */
export function schemaProblem(schema: unknown): string | null {
  const json = JSON.stringify(schema)
  if (json === undefined) return 'must be a JSON Schema object'
  if (json.length > maxSchemaChars) return `must be at most ${maxSchemaChars} characters as JSON`
  const walk = (node: unknown, depth: number): string | null => {
    if (depth > maxSchemaDepth) return `must nest at most ${maxSchemaDepth} levels`
    if (Array.isArray(node)) {
      for (const item of node) {
        const problem = walk(item, depth + 1)
        if (problem) return problem
      }
      return null
    }
    if (typeof node !== 'object' || node === null) return null
    for (const [key, value] of Object.entries(node)) {
      if (key === 'pattern' && typeof value === 'string') {
        const problem = checkPattern(value, 'u')
        if (problem) return `pattern: ${problem}`
      }
      if (key === 'patternProperties' && typeof value === 'object' && value !== null) {
        for (const name of Object.keys(value)) {
          const problem = checkPattern(name, 'u')
          if (problem) return `patternProperties: ${problem}`
        }
      }
      const problem = walk(value, depth + 1)
      if (problem) return problem
    }
    return null
  }
  return walk(schema, 0)
}

// A fresh Ajv per schema (two schemas may share an $id); compiled validators kept for the schemas seen last.
const compiled = new Map<string, ValidateFunction>()

/**
 * Compiles a JSON Schema (draft 2020-12; `format` is not checked; no remote `$ref` is fetched).
 * @throws StepError ai_invalid_schema (not retried) when it does not compile or has a schemaProblem.
 */
export function compileSchema(schema: unknown): ValidateFunction {
  const problem = schemaProblem(schema)
  if (problem) throw new StepError('ai_invalid_schema', `The JSON Schema ${problem}`, {}, 422, false)
  const key = JSON.stringify(schema)
  const hit = compiled.get(key)
  if (hit) return hit
  let validate: ValidateFunction
  try {
    validate = new Ajv2020({
      strict: false,
      allErrors: true,
      validateFormats: false,
      inlineRefs: true,
      code: { regExp: ajvRegExp },
    }).compile(schema as object)
  } catch (err) {
    throw new StepError(
      'ai_invalid_schema',
      `The JSON Schema does not compile: ${(err as Error).message.slice(0, 300)}`,
      {},
      422,
      false,
    )
  }
  if (compiled.size >= 200) compiled.delete(compiled.keys().next().value!)
  compiled.set(key, validate)
  return validate
}

/** A refinement for a schema field: compiles it when saved unless a template stands in it (then it is checked when run). */
export function schemaRefinement(value: unknown, ctx: z.RefinementCtx): void {
  if (JSON.stringify(value)?.includes('{{')) return
  try {
    compileSchema(value)
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message })
  }
}

/**
 * Checks a parsed answer against a compiled schema.
 * @throws StepError ai_invalid_output (retryable: the next answer may conform) naming the first problems.
 */
export function checkAgainstSchema(validate: ValidateFunction, value: unknown, answer: string): void {
  if (validate(value)) return
  const errors = (validate.errors ?? [])
    .slice(0, 10)
    .map((e) => ({ path: e.instancePath || '/', message: e.message ?? 'invalid' }))
  const first = errors[0]
  throw new StepError(
    'ai_invalid_output',
    `The model's answer does not match the JSON Schema${first ? `: ${first.path} ${first.message}` : ''}`,
    { errors, answer: answer.slice(0, 500) },
    502,
    true,
  )
}

/** The usage fields every AI operation outputs. */
export function usageOf(result: { model: string; provider: string; tokens: number; tokensEstimated: boolean }) {
  return {
    model: result.model,
    provider: result.provider,
    tokens: result.tokens,
    tokensEstimated: result.tokensEstimated,
  }
}
