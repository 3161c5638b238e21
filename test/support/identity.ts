import { expect } from 'vitest'
import type { TestServer } from './harness.js'
import { principals, type Principal } from '../../src/lib/principal.js'

export interface Account {
  id: string
  email: string
  password: string
  token: string
  role: string
}

let counter = 0
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}`

/** The install's first sign-up: the owner (super_admin of the default project). */
export async function signUpOwner(
  server: TestServer,
  email = 'owner@example.com',
  password = 'owner password',
): Promise<Account> {
  const reply = await server.request('POST', '/api/auth/sign-up/email', { body: { email, password, name: 'Owner' } })
  expect(reply.status, reply.text).toBe(200)
  return { id: reply.body.user.id, email, password, token: reply.body.token, role: reply.body.user.role }
}

/** An account with a role, created by an administrator and signed in. */
export async function createAccount(
  server: TestServer,
  adminToken: string,
  options: { role: string; email?: string; password?: string; username?: string; name?: string },
): Promise<Account> {
  const email = options.email ?? `${unique(options.role)}@example.com`
  const password = options.password ?? 'a good password'
  const created = await server.request('POST', '/api/v1/users', {
    token: adminToken,
    body: {
      email,
      password,
      name: options.name ?? options.role,
      role: options.role,
      ...(options.username ? { username: options.username } : {}),
    },
  })
  expect(created.status, created.text).toBe(201)
  const signedIn = await server.request('POST', '/api/auth/sign-in/email', { body: { email, password } })
  expect(signedIn.status, signedIn.text).toBe(200)
  return { id: created.body.data.id, email, password, token: signedIn.body.token, role: options.role }
}

/** The id of a role of the acting project, by name. */
export async function roleId(server: TestServer, adminToken: string, name: string): Promise<string> {
  const reply = await server.request('GET', '/api/v1/roles', { token: adminToken })
  const role = (reply.body.data as { id: string; name: string }[]).find((r) => r.name === name)
  if (!role) throw new Error(`No role ${name}`)
  return role.id
}

/** Replaces a role's grants (e.g. to open sign-up by giving `public` system/users:create). */
export async function setGrants(
  server: TestServer,
  adminToken: string,
  role: string,
  grants: unknown[],
): Promise<void> {
  const id = await roleId(server, adminToken, role)
  const reply = await server.request('PUT', `/api/v1/roles/${id}/grants`, { token: adminToken, body: { grants } })
  expect(reply.status, reply.text).toBe(200)
}

/**
 * The principal an account's session would give, for calling services in process (as the routes do): its
 * role looked up by name in the default project.
 */
export async function sessionPrincipal(
  server: TestServer,
  adminToken: string,
  account: Account,
  superAdmin = false,
): Promise<Principal> {
  return principals.user(
    {
      homeProjectId: server.app.defaultProject.id,
      userId: account.id,
      roleId: await roleId(server, adminToken, account.role),
      roleName: account.role,
      superAdmin,
    },
    { id: `s${Math.random().toString(36).slice(2)}`, expiresAt: 4_000_000_000 },
  )
}
