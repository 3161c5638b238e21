import { expect } from 'vitest'
import type { Reply, TestServer } from '../support/harness.js'
import { createAccount, setGrants, type Account } from '../support/identity.js'

/**
 * Small helpers the collection, field-type and database API tests share. Everything goes over HTTP;
 * nothing here reaches into the app.
 */

let seq = 0
/** A collection (or role, or database) name no other test of the run uses. */
export const uniqueName = (prefix: string): string =>
  `${prefix}_${(seq++).toString(36)}_${Math.random().toString(36).slice(2, 7)}`

/** A field definition with `required: false` unless told otherwise. */
export const field = (name: string, type: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name,
  type,
  required: false,
  ...extra,
})

/** POST /api/v1/collections, expecting 201 `{ data }`; returns the created collection. */
export async function createCollection(server: TestServer, token: string, body: Record<string, unknown>): Promise<any> {
  const reply = await server.request('POST', '/api/v1/collections', { token, body })
  expect(reply.status, reply.text).toBe(201)
  expect(Object.keys(reply.body)).toEqual(['data'])
  return reply.body.data
}

/** GET /api/v1/collections/:name, expecting 200; returns the detail. */
export async function getCollection(server: TestServer, token: string, name: string): Promise<any> {
  const reply = await server.request('GET', `/api/v1/collections/${name}`, { token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

/** The collection names GET /api/v1/collections shows this caller (anonymous without a token). */
export async function listedNames(server: TestServer, token?: string): Promise<string[]> {
  const reply = await server.request('GET', '/api/v1/collections', { token })
  expect(reply.status, reply.text).toBe(200)
  return (reply.body.data as { name: string }[]).map((c) => c.name)
}

/** POST a record; returns the raw reply (the caller asserts the status). */
export function postRecord(
  server: TestServer,
  token: string,
  collection: string,
  body: Record<string, unknown>,
  query = '',
): Promise<Reply> {
  return server.request('POST', `/api/v1/collections/${collection}/records${query}`, { token, body })
}

/** POST a record, expecting 201; returns the record. */
export async function createRecord(
  server: TestServer,
  token: string,
  collection: string,
  body: Record<string, unknown>,
  query = '',
): Promise<any> {
  const reply = await postRecord(server, token, collection, body, query)
  expect(reply.status, reply.text).toBe(201)
  return reply.body
}

/** GET one record, expecting 200; returns it. */
export async function readRecord(
  server: TestServer,
  token: string,
  collection: string,
  id: string,
  query = '',
): Promise<any> {
  const reply = await server.request('GET', `/api/v1/collections/${collection}/records/${id}${query}`, { token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

/** A signed-in account in a new custom role holding exactly these grants. */
export async function accountWithGrants(
  server: TestServer,
  ownerToken: string,
  grants: { resource: string; action: string }[],
): Promise<Account> {
  const role = uniqueName('role')
  const created = await server.request('POST', '/api/v1/roles', { token: ownerToken, body: { name: role } })
  expect(created.status, created.text).toBe(201)
  await setGrants(server, ownerToken, role, grants)
  return createAccount(server, ownerToken, { role })
}
