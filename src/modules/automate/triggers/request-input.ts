import type { Context } from 'hono'
import { JsonTooLarge, parseJsonBounded } from '../../../lib/json-bounds.js'
import { AppError } from '../../../lib/errors.js'
import type { AppEnv } from '../../../lib/http/index.js'

const jsonType = /^application\/([\w.-]+\+)?json$/i
const formType = /^application\/x-www-form-urlencoded$/i

/**
 * What `$trigger.body` holds for a webhook or api_endpoint call: the query parameters for GET (a repeated
 * parameter as a list), otherwise the body: JSON parsed, a form as an object, an empty body as `{}`, any
 * other media type as its text. Throws invalid_request for malformed JSON.
 */
export async function requestInput(c: Context<AppEnv>): Promise<unknown> {
  if (c.req.method === 'GET') return queryObject(c.req.queries())
  const text = await c.req.text()
  if (text.trim() === '') return {}
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim()
  if (jsonType.test(type)) {
    try {
      return parseJsonBounded(text)
    } catch (err) {
      if (err instanceof JsonTooLarge)
        throw new AppError('payload_too_large', `The request body ${err.message.slice('The JSON '.length)}`, {
          limit: err.limit,
        })
      throw new AppError('invalid_request', 'Malformed JSON in request body')
    }
  }
  if (formType.test(type)) {
    const params = new URLSearchParams(text)
    const lists: Record<string, string[]> = {}
    for (const [key, value] of params) (lists[key] ??= []).push(value)
    return queryObject(lists)
  }
  return text
}

function queryObject(lists: Record<string, string[]>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>
  for (const [key, values] of Object.entries(lists)) out[key] = values.length === 1 ? values[0]! : values
  return { ...out }
}
