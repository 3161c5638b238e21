import { expect } from 'vitest'
import type { TestServer } from './harness.js'

/** One operation of the running server, as its OpenAPI document declares it. */
export interface Operation {
  readonly method: string
  /** The OpenAPI path template (`/api/v1/collections/{name}`). */
  readonly path: string
  readonly operationId: string
  /** `x-permission`: `public`, `authenticated` or a `resource:action` template. */
  readonly permission: string
}

const methods = new Set(['get', 'put', 'post', 'patch', 'delete'])

/** Every operation the server declares (GET /api/openapi.json), so a test over them cannot drift from the routes. */
export async function operations(server: TestServer): Promise<Operation[]> {
  const reply = await server.request('GET', '/api/openapi.json')
  expect(reply.status, reply.text).toBe(200)
  const out: Operation[] = []
  for (const [path, item] of Object.entries<Record<string, any>>(reply.body.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!methods.has(method)) continue
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: String(op.operationId),
        permission: String(op['x-permission']),
      })
    }
  }
  return out
}

/** The `resource:action` permissions the routes check, their `{param}` placeholders filled by `fill`. */
export async function routePermissions(server: TestServer, fill: (param: string) => string): Promise<string[]> {
  const all = (await operations(server))
    .map((op) => op.permission)
    .filter((p) => p !== 'public' && p !== 'authenticated')
  return [...new Set(all.map((p) => p.replace(/\{(\w+)\}/g, (_, param: string) => fill(param))))].sort()
}
