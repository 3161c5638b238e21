import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { createRouter, defineRoute, jsonContent, z } from './route.js'

// Requests validated by the one-handler path (validate.ts) answer as @hono/zod-openapi's validators did.
function app() {
  const router = createRouter()
  const Body = z.object({ n: z.number() })
  const reply = jsonContent(z.unknown(), 'echo')
  for (const required of [true, false]) {
    router.openapi(
      defineRoute({
        method: 'post',
        path: `/${required ? 'required' : 'optional'}/{id}`,
        operationId: `t.${required}`,
        summary: 't',
        permission: null,
        request: {
          params: z.object({ id: z.coerce.number().int() }),
          query: z.object({ tag: z.string().max(3).optional() }),
          headers: z.object({ 'if-match': z.string().max(5).optional() }),
          body: { required, content: { 'application/json': { schema: Body } } },
        },
        responses: { 200: reply },
      }),
      (c) =>
        c.json(
          {
            param: c.req.valid('param'),
            query: c.req.valid('query'),
            header: c.req.valid('header'),
            json: c.req.valid('json'),
          },
          200,
        ),
    )
  }
  router.onError((err, c) => {
    const e = err instanceof AppError ? err : new AppError('internal', String(err))
    return c.json({ error: e.code, message: e.message, details: e.details }, e.status as 400)
  })
  return router
}

const post = (path: string, body?: string, headers: Record<string, string> = {}) =>
  app().request(path, { method: 'POST', body, headers })
const json = { 'content-type': 'application/json' }

describe('request validation', () => {
  it('hands every target, parsed and coerced, to the handler', async () => {
    const res = await post('/required/7?tag=ab', '{"n":1}', { ...json, 'If-Match': '"3"' })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      param: { id: 7 },
      query: { tag: 'ab' },
      header: { 'if-match': '"3"' },
      json: { n: 1 },
    })
  })

  it.each([
    ['a bad path parameter', '/required/x', '{"n":1}', json, 400, 'path.id'],
    ['a bad query parameter', '/required/1?tag=abcd', '{"n":1}', json, 400, 'query.tag'],
    ['a bad header', '/required/1', '{"n":1}', { ...json, 'if-match': '123456' }, 400, 'header.if-match'],
    ['a body of the wrong shape', '/required/1', '{"n":"1"}', json, 400, 'body.n'],
  ] as const)('%s is 400 naming its location', async (_, path, body, headers, status, location) => {
    const res = await post(path, body, headers)
    expect(res.status).toBe(status)
    const answer = (await res.json()) as { error: string; details: { issues: { location: string }[] } }
    expect(answer.error).toBe('invalid_request')
    expect(answer.details.issues[0]!.location).toBe(location)
  })

  it('malformed JSON is 400', async () => {
    const res = await post('/required/1', '{"n":', json)
    expect(res.status).toBe(400)
    expect(((await res.json()) as { message: string }).message).toBe('Malformed JSON in request body')
  })

  it.each(['required', 'optional'])('a %s body of another media type is 415', async (kind) => {
    expect((await post(`/${kind}/1`, 'n=1', { 'content-type': 'text/plain' })).status).toBe(415)
    expect((await post(`/${kind}/1`, 'n=1')).status).toBe(415) // a body without a Content-Type
  })

  it('an optional body may be absent; a required one is then validated as {}', async () => {
    const optional = await post('/optional/1')
    expect(optional.status).toBe(200)
    expect(((await optional.json()) as { json: unknown }).json).toEqual({})
    const required = await post('/required/1')
    expect(required.status).toBe(400)
  })
})
