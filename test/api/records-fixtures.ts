import { expect } from 'vitest'
import type { Reply, TestServer } from '../support/harness.js'

/** Helpers the records API test files share: HTTP verbs with a token, and collections to work on. */

export const recordId = /^[0-9a-f]{32}$/

let seq = 0
/** A collection name no other test of the file uses. */
export const freshName = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${(seq++).toString(36)}`

/** The five verbs, each with an optional token and headers. */
export function client(server: () => TestServer) {
  const call = (
    method: string,
    path: string,
    token: string | undefined,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Reply> => server().request(method, path, { token, headers, ...(body === undefined ? {} : { body }) })
  return {
    get: (path: string, token?: string, headers?: Record<string, string>) =>
      call('GET', path, token, undefined, headers),
    post: (path: string, token: string | undefined, body?: unknown, headers?: Record<string, string>) =>
      call('POST', path, token, body ?? {}, headers),
    patch: (path: string, token: string | undefined, body: unknown, headers?: Record<string, string>) =>
      call('PATCH', path, token, body, headers),
    del: (path: string, token?: string, headers?: Record<string, string>) =>
      call('DELETE', path, token, undefined, headers),
  }
}

/**
 * The storage type the records suites put their collections in when a test does not choose one:
 * TEST_STORAGE_TYPE (e.g. durable_object) runs them all on it; unset, the server's default (d1).
 */
const storageType = process.env.TEST_STORAGE_TYPE || undefined

/** Creates a collection (201) and returns its name. */
export async function createCollection(
  server: TestServer,
  token: string,
  name: string,
  fields: unknown[],
  extra: Record<string, unknown> = {},
): Promise<string> {
  const chosen = storageType && !('storageType' in extra) ? { storageType } : {}
  const reply = await server.request('POST', '/api/v1/collections', {
    token,
    body: { name, fields, ...chosen, ...extra },
  })
  expect(reply.status, reply.text).toBe(201)
  return name
}

/** The records path of a collection, optionally of one record and with a query. */
export function recordsPath(
  collection: string,
  id?: string,
  query?: Record<string, string | number | boolean>,
): string {
  const base = `/api/v1/collections/${collection}/records${id === undefined ? '' : `/${id}`}`
  if (!query) return base
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString()
  return `${base}?${qs}`
}

/** Creates a record (201) and returns it. */
export async function createRecord(
  server: TestServer,
  token: string,
  collection: string,
  body: Record<string, unknown>,
): Promise<Record<string, any>> {
  const reply = await server.request('POST', recordsPath(collection), { token, body })
  expect(reply.status, reply.text).toBe(201)
  return reply.body
}

/** A record as stored, read back (200), with deleted ones on request. */
export async function readRecord(
  server: TestServer,
  token: string,
  collection: string,
  id: string,
  query: Record<string, string> = {},
): Promise<Record<string, any>> {
  const reply = await server.request('GET', recordsPath(collection, id, query), { token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

/** Every record of a collection (up to 100), as a list answers. */
export async function listAll(
  server: TestServer,
  token: string,
  collection: string,
  query: Record<string, string | number | boolean> = {},
): Promise<Record<string, any>[]> {
  const reply = await server.request('GET', recordsPath(collection, undefined, { limit: 100, ...query }), { token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

/** Asserts an error envelope with its code (and nothing else in the body). */
export function expectError(reply: Reply, status: number, code: string): void {
  expect(reply.status, reply.text).toBe(status)
  expect(Object.keys(reply.body ?? {}).sort()).toEqual(['details', 'error', 'message'])
  expect(reply.body.error).toBe(code)
}

/** Unix seconds now. */
export const nowSeconds = () => Math.floor(Date.now() / 1000)
