import type { RouteConfig } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { z } from 'zod'
import { AppError } from '../errors.js'
import type { AppEnv } from './env.js'

type Target = 'query' | 'param' | 'header' | 'json'
type Schema = z.ZodType
/** Throws the error for a failed validation (route.ts's rejectInvalid). */
export type RejectHook = (result: { success: false; target: Target; error: z.ZodError }) => void

// The three tests @hono/zod-openapi and hono/validator apply, kept identical: a declared JSON media type,
// the 415 gate on the request's Content-Type, and the media type whose body is parsed.
const jsonDeclared = /^application\/([a-z-.]+\+)?json/i
const jsonRequest = /^application\/([a-z-.]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i
const jsonType = /^application\/([\w.-]+\+)?json$/i

/**
 * A route's request validation as one function: the same checks, statuses and messages as the
 * per-target validator middleware of @hono/zod-openapi, without a middleware (and a WHATWG Headers
 * object) per target. Null when the route has something only that middleware handles (forms, cookies,
 * bodies of other declared types): such a route is registered the ordinary way.
 */
export function requestValidation(
  request: RouteConfig['request'],
  reject: RejectHook,
): ((c: Context<AppEnv>) => Promise<void> | undefined) | null {
  if (!request) return () => undefined
  if (request.cookies) return null
  const content = request.body?.content as Record<string, { schema?: unknown }> | undefined
  const mediaTypes = content ? Object.keys(content) : []
  if (mediaTypes.some((type) => !jsonDeclared.test(type))) return null
  // Query, params and headers are checked synchronously; only a JSON body is awaited (it is read first).
  const steps: ((c: Context<AppEnv>) => void)[] = []
  const check = (target: Target, schema: Schema, value: unknown, c: Context<AppEnv>): void => {
    const result = parse(schema, value)
    if (result.success) c.req.addValidatedData(target, result.data as object)
    else reject({ success: false, target, error: result.error })
  }
  if (request.query) {
    const schema = request.query as Schema
    // A request without a query string (most reads by id) gets the same answer every time: parsed once and
    // copied per request, as for absent headers below (issue 33: a seventh of a GET by id's CPU). Only when
    // every value is a scalar, so no request can change what the next one is given.
    const empty = parse(schema, {})
    const reusable =
      empty.success && Object.values(empty.data as object).every((v) => v === null || typeof v !== 'object')
    steps.push((c) => {
      if (reusable && !c.req.url.includes('?')) c.req.addValidatedData('query', { ...(empty.data as object) })
      else check('query', schema, queryOf(c), c)
    })
  }
  if (request.params) {
    const schema = request.params as Schema
    steps.push((c) => check('param', schema, c.req.param(), c))
  }
  if (request.headers) {
    const schema = request.headers as Schema & { shape: Record<string, unknown> }
    const names = Object.keys(schema.shape)
    // Most requests send none of a route's declared headers (If-Match, If-None-Match): that parse gives the
    // same answer every time, so it is made once (a copy per request) rather than per request. Header
    // schemas are plain strings and enums, with no default that could differ from one call to the next.
    const absent = parse(schema, Object.fromEntries(names.map((name) => [name, undefined])))
    steps.push((c) => {
      const values = names.map((name) => headerOf(c, name))
      if (absent.success && values.every((value) => value === undefined))
        c.req.addValidatedData('header', { ...(absent.data as object) })
      else check('header', schema, Object.fromEntries(names.map((name, i) => [name, values[i]])), c)
    })
  }
  const jsonSchema = mediaTypes.map((type) => content![type]!.schema).find((schema) => schema !== undefined) as
    | Schema
    | undefined
  const synchronous = (c: Context<AppEnv>): undefined => {
    for (const step of steps) step(c)
    return undefined
  }
  if (!jsonSchema) return synchronous
  const required = request.body?.required === true
  return async (c) => {
    synchronous(c)
    const type = headerOf(c, 'content-type')
    // Required or not, a body of another media type is refused; an optional body may be absent.
    if (type ? !jsonRequest.test(type) : hasBody(c))
      throw new AppError('unsupported_media_type', 'Unsupported Media Type')
    if (required || type) check('json', jsonSchema, await bodyValue(c, type), c)
    else c.req.addValidatedData('json', {})
  }
}

function parse(
  schema: Schema,
  value: unknown,
): { success: true; data: unknown } | { success: false; error: z.ZodError } {
  return schema.safeParse(value) as { success: true; data: unknown } | { success: false; error: z.ZodError }
}

function essence(contentType: string): string {
  return contentType.split(';')[0]!.trim().toLowerCase()
}

function headerOf(c: Context<AppEnv>, name: string): string | undefined {
  const incoming = c.env?.incoming
  if (!incoming) return c.req.header(name)
  const value = incoming.headers[name.toLowerCase()]
  return Array.isArray(value) ? value.join(', ') : value
}

function hasBody(c: Context<AppEnv>): boolean {
  const incoming = c.env?.incoming
  if (!incoming) return c.req.raw.body !== null
  const length = incoming.headers['content-length']
  return (length !== undefined && Number(length) > 0) || incoming.headers['transfer-encoding'] !== undefined
}

/** The parsed JSON body, or `{}` when the request's media type is not JSON (as hono/validator does). */
async function bodyValue(c: Context<AppEnv>, type: string | undefined): Promise<unknown> {
  if (!type || !jsonType.test(essence(type))) return {}
  try {
    return await c.req.json()
  } catch {
    throw new AppError('invalid_request', 'Malformed JSON in request body')
  }
}

function queryOf(c: Context<AppEnv>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [key, values] of Object.entries(c.req.queries())) out[key] = values.length === 1 ? values[0]! : values
  return out
}
