import { expect, it } from 'vitest'
import type { RequestOptions, TestServer } from './harness.js'

/** One row of an API scenario table. */
export interface Scenario {
  name: string
  method: string
  path: string
  body?: unknown
  rawBody?: string
  headers?: Record<string, string>
  /** Who calls: a bearer token, or a function of the server that returns one. Anonymous when absent. */
  as?: string | ((server: TestServer) => string | Promise<string>)
  status: number
  /** A deep partial of the JSON body that must match. */
  contains?: unknown
  /** Strings that must not appear anywhere in the raw body. */
  notContains?: string[]
  /** Response headers that must have these values; null means the header must be absent. */
  responseHeaders?: Record<string, string | RegExp | null>
}

/** Declares one test per row; `server` is read when the row runs, after beforeAll has started it. */
export function runScenarios(getServer: () => TestServer, scenarios: Scenario[]): void {
  for (const s of scenarios) {
    it(`${s.method} ${s.path}: ${s.name}`, async () => {
      const server = getServer()
      const token = typeof s.as === 'function' ? await s.as(server) : s.as
      const options: RequestOptions = { headers: s.headers, token }
      if (s.body !== undefined) options.body = s.body
      if (s.rawBody !== undefined) options.rawBody = s.rawBody
      const reply = await server.request(s.method, s.path, options)
      expect(reply.status, reply.text).toBe(s.status)
      // Every response, errors and 404s included, carries the version and the request id.
      expect(reply.headers.get('x-api-version')).toBe('v1')
      expect(reply.headers.get('x-request-id')).toMatch(/^[\w.:-]{1,128}$/)
      if (s.status >= 400) expect(Object.keys(reply.body ?? {}).sort()).toEqual(['details', 'error', 'message'])
      if (s.contains !== undefined) expect(reply.body).toMatchObject(s.contains as object)
      for (const needle of s.notContains ?? []) expect(reply.text).not.toContain(needle)
      for (const [name, want] of Object.entries(s.responseHeaders ?? {})) {
        const got = reply.headers.get(name)
        if (want === null) expect(got, name).toBeNull()
        else if (want instanceof RegExp) expect(got, name).toMatch(want)
        else expect(got, name).toBe(want)
      }
    })
  }
}
