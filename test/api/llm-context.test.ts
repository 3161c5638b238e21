import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'

/**
 * `/api/v1/system/llm-context` tells AI tools how the API answers (issue 31 item 6): its statements are
 * checked against real answers. Each operation's `answers` line is the shape of its success answer; lists
 * that answer a bare array (the auth routes') and `{ data, total, … }` pages alike are told as they are.
 */

let server: TestServer
let owner: Account
let context = ''

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  context = (await server.request('GET', '/api/v1/system/llm-context')).text
})
afterAll(async () => {
  await server?.stop()
})

/** The `answers` line of an operation, after `answers 200: `. */
function answers(method: string, path: string): string {
  const at = context.indexOf(`### ${method} ${path}\n`)
  expect(at, `${method} ${path} is in the context`).toBeGreaterThanOrEqual(0)
  const line = context
    .slice(at)
    .split('\n')
    .find((l) => l.startsWith('- answers '))
  expect(line, `${method} ${path} has an answers line`).toBeDefined()
  return line!.replace(/^- answers \d+: /, '')
}

/** The top-level keys a shape `{ a: …, b?: … }` names. */
function topKeys(shape: string): string[] {
  const keys: string[] = []
  let depth = 0
  let token = ''
  for (const char of shape.slice(1, -1)) {
    if ('{[('.includes(char)) depth++
    if ('}])'.includes(char)) depth--
    if (depth === 0 && char === ',') {
      keys.push(token)
      token = ''
    } else token += char
  }
  keys.push(token)
  return keys.map((k) => k.trim().split(':')[0]!.replace(/\?$/, '')).filter(Boolean)
}

describe('GET /api/v1/system/llm-context', () => {
  it('claims no convention the API does not keep', () => {
    expect(context).not.toMatch(/timestamps are Unix seconds/)
    expect(context).not.toMatch(/lists as `\{ "data": \[\], "total"/)
  })

  it.each([
    ['GET', '/api/auth/api-keys'],
    ['GET', '/api/v1/automate/flows'],
    ['GET', '/api/v1/collections'],
    ['GET', '/api/v1/roles'],
    ['GET', '/api/v1/views'],
    ['GET', '/api/v1/blueprints/installs'],
  ])('%s %s answers the shape it is said to', async (method, path) => {
    const shape = answers(method, path)
    const reply = await server.request(method, path, { token: owner.token })
    expect(reply.status, reply.text).toBe(200)
    if (shape.endsWith('[]') && !shape.startsWith('{ data')) expect(Array.isArray(reply.body)).toBe(true)
    else {
      expect(Array.isArray(reply.body)).toBe(false)
      const said = topKeys(shape)
      for (const key of Object.keys(reply.body)) expect(said, `${path} answers ${key}`).toContain(key)
    }
  })

  it('says which times are numbers and which are strings, as they are', async () => {
    await server.request('POST', '/api/v1/automate/flows', {
      token: owner.token,
      body: { name: 'Times', triggerType: 'manual', triggerConfig: {}, operations: [] },
    })
    const flows = (await server.request('GET', '/api/v1/automate/flows', { token: owner.token })).body.data
    expect(answers('GET', '/api/v1/automate/flows')).toContain('createdAt: string')
    expect(new Date(flows[0].createdAt).toISOString()).toBe(flows[0].createdAt)
    const collections = answers('GET', '/api/v1/collections')
    expect(collections).toContain('createdAt: integer')
  })
})
