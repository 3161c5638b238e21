import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { runCli } from '../support/cli-process.js'
import { boot, type TestServer } from '../support/harness.js'
import { createTestDatabase, testDatabaseUrl } from '../support/postgres.js'

/**
 * `plinth admin create` as a real process on a fresh DATA_DIR (and, with TEST_DATABASE_URL, a fresh
 * PostgreSQL database), then a server started on the same data: the owner signs in as super_admin.
 */

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A fresh data directory (and database), and the settings both the CLI and the server get. */
async function freshInstall(): Promise<Record<string, string>> {
  const adminUrl = testDatabaseUrl()
  const database = adminUrl ? await createTestDatabase(adminUrl) : null
  if (database) cleanups.push(database.drop)
  return {
    DATA_DIR: mkdtempSync(join(tmpdir(), 'plinth-cli-admin-')),
    PASSWORD_HASH_ITERATIONS: '1000',
    ...(database ? { DATABASE_URL: database.url, SECRET_KEY: randomBytes(32).toString('hex') } : {}),
  }
}

const cli = runCli

/** A server on the install's data (its own port and log); stopped after the test, leaving the data to cleanup. */
async function serverOn(env: Record<string, string>): Promise<TestServer> {
  const { DATA_DIR, ...settings } = env
  const server = await boot(settings, async () => {}, {}, DATA_DIR)
  cleanups.push(() => server.stop())
  return server
}

const signIn = (server: TestServer, email: string, password: string) =>
  server.request('POST', '/api/auth/sign-in/email', { body: { email, password } })

describe('plinth admin create', { timeout: 120_000 }, () => {
  it('creates the owner on a fresh install; a server started on it signs them in as super_admin', async () => {
    const env = await freshInstall()
    const ran = await cli(
      ['admin', 'create', '--email', 'Boss@Example.com', '--name', 'The Boss', '--password-stdin'],
      env,
      'correct horse battery\n',
    )
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toMatch(
      /^Created the owner boss@example\.com \([0-9a-f]{32}\), super_admin of the default project\.\n/,
    )
    expect(ran.stdout + ran.stderr).not.toContain('correct horse')

    const server = await serverOn(env)
    // The trailing newline from stdin is not part of the password.
    const signedIn = await signIn(server, 'boss@example.com', 'correct horse battery')
    expect(signedIn.status, signedIn.text).toBe(200)
    expect(signedIn.body.user).toMatchObject({ email: 'boss@example.com', name: 'The Boss', role: 'super_admin' })
    const audit = await server.request('GET', '/api/v1/audit-log?action=user.sign_up', { token: signedIn.body.token })
    expect(audit.status, audit.text).toBe(200)
    expect(audit.body.data).toMatchObject([{ action: 'user.sign_up', details: { method: 'cli' } }])
    // The next HTTP sign-up is not an owner: sign-up is closed by default now that the install has one.
    const next = await server.request('POST', '/api/auth/sign-up/email', {
      body: { email: 'late@example.com', password: 'another password', name: 'Late' },
    })
    expect(next.status).toBe(403)
  })

  it('refuses when an owner exists (exit 1, nothing changed) and refuses a weak password by the API rule', async () => {
    const env = await freshInstall()
    const weak = await cli(['admin', 'create', '--email', 'a@example.com', '--password-stdin'], env, 'short\n')
    expect(weak.code).toBe(1)
    expect(weak.stderr).toBe('error: the password must be at least 8 characters\n')
    expect(weak.stdout).toBe('')

    const first = await cli(['admin', 'create', '--email', 'a@example.com', '--password-stdin'], env, 'first password')
    expect(first.code, first.stderr).toBe(0)
    const second = await cli(
      ['admin', 'create', '--email', 'b@example.com', '--password-stdin'],
      env,
      'second password',
    )
    expect(second.code).toBe(1)
    expect(second.stderr).toBe(
      'error: this instance already has accounts, and its first account is its owner; nothing was changed\n',
    )

    const server = await serverOn(env)
    expect((await signIn(server, 'b@example.com', 'second password')).status).toBe(401)
    const owner = await signIn(server, 'a@example.com', 'first password')
    expect(owner.status, owner.text).toBe(200)
    // Without --name the display name is the email's local part.
    expect(owner.body.user).toMatchObject({ name: 'a', role: 'super_admin' })
    const users = await server.request('GET', '/api/v1/users', { token: owner.body.token })
    expect(users.body.total).toBe(1)
  })

  it('never takes the password as an argument; without a terminal it asks for --password-stdin (exit 2)', async () => {
    const env = await freshInstall()
    const asArgument = await cli(['admin', 'create', '--email', 'a@example.com', '--password', 'hunter22hunter'], env)
    expect(asArgument.code).toBe(2)
    expect(asArgument.stderr).toContain("Unknown option '--password'")
    const noTerminal = await cli(['admin', 'create', '--email', 'a@example.com'], env)
    expect(noTerminal.code).toBe(2)
    expect(noTerminal.stderr).toContain(
      'Standard input is not a terminal: give the password on it with --password-stdin',
    )
    const noEmail = await cli(['admin', 'create', '--password-stdin'], env, 'a good password')
    expect(noEmail.code).toBe(2)
    expect(noEmail.stderr).toContain('--email is required')
    const badEmail = await cli(['admin', 'create', '--email', 'nobody', '--password-stdin'], env, 'a good password')
    expect(badEmail.code).toBe(2)
    expect(badEmail.stderr).toContain('Not an email address: nobody')

    // Nothing was created: the install's first HTTP sign-up still becomes its owner.
    const server = await serverOn(env)
    const signUp = await server.request('POST', '/api/auth/sign-up/email', {
      body: { email: 'a@example.com', password: 'a good password', name: 'A' },
    })
    expect(signUp.status, signUp.text).toBe(200)
    expect(signUp.body.user.role).toBe('super_admin')
  })

  it('--help prints the usage and exits 0; an unknown admin command is 2', async () => {
    const help = await cli(['admin', 'create', '--help'], {})
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: plinth admin create --email <email> [--name <name>] [--password-stdin]')
    const unknown = await cli(['admin', 'destroy'], {})
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('Unknown command: admin destroy')
  })
})
