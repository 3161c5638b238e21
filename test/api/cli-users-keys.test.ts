import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../support/cli-process.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'

/**
 * `plinth users …` and `plinth keys …` as child processes against a real instance, as the holder of
 * PLINTH_TOKEN: what they print, their exit codes, and what the instance then does. The attacks: a
 * non-admin token cannot ban; a key's secret appears nowhere but the creation answer (stdout).
 */

let server: TestServer
let owner: Account
let viewer: Account
let target: Account

const cli = (args: string[], token: string) => runCli(args, { PLINTH_URL: server.url, PLINTH_TOKEN: token })

const signIn = (account: Account) =>
  server.request('POST', '/api/auth/sign-in/email', { body: { email: account.email, password: account.password } })

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  viewer = await createAccount(server, owner.token, { role: 'viewer', email: 'viewer@example.com' })
  target = await createAccount(server, owner.token, { role: 'editor', email: 'target@example.com' })
  const teams = await server.request('POST', '/api/v1/collections', {
    token: owner.token,
    body: { name: 'teams', fields: [{ name: 'name', type: 'text', required: true }] },
  })
  expect(teams.status, teams.text).toBe(201)
})
afterAll(() => server?.stop())

describe('plinth users', { timeout: 60_000 }, () => {
  it('list prints every user; --json gives them with the total, never password material', async () => {
    const ran = await cli(['users', 'list'], owner.token)
    expect(ran.code, ran.stderr).toBe(0)
    const lines = ran.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^ID\s+EMAIL\s+ROLE\s+STATUS\s+NAME$/)
    // Accounts made in the same second come in any order among themselves.
    expect(lines.slice(1).sort()).toEqual(
      [
        `${owner.id}  owner@example.com   super_admin  active  Owner`,
        `${viewer.id}  viewer@example.com  viewer       active  viewer`,
        `${target.id}  target@example.com  editor       active  editor`,
      ].sort(),
    )
    expect(ran.stderr).toBe('3 users\n')

    const json = await cli(['users', 'list', '--json'], owner.token)
    expect(json.code, json.stderr).toBe(0)
    const body = JSON.parse(json.stdout)
    expect(body.total).toBe(3)
    expect(body.data.map((u: { email: string }) => u.email).sort()).toEqual([owner.email, target.email, viewer.email])
    expect(json.stdout).not.toMatch(/password|hash|totp_secret/i)
  })

  it('ban by email stops the user at once; --unban by id lets them back', async () => {
    const before = await signIn(target)
    expect(before.status).toBe(200)
    const ran = await cli(['users', 'ban', 'TARGET@example.com'], owner.token)
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toBe(`Banned target@example.com (${target.id})\n`)
    expect((await signIn(target)).body.error).toBe('account_banned')
    expect((await server.request('GET', '/api/v1/collections', { token: before.body.token })).status).toBe(401)

    const unban = await cli(['users', 'ban', target.id, '--unban'], owner.token)
    expect(unban.code, unban.stderr).toBe(0)
    expect(unban.stdout).toBe(`Unbanned target@example.com (${target.id})\n`)
    expect((await signIn(target)).status).toBe(200)
  })

  it('attack: a non-admin token cannot ban (exit 1 with the code), and nobody is banned', async () => {
    for (const who of [owner.id, 'target@example.com']) {
      const ran = await cli(['users', 'ban', who], viewer.token)
      expect(ran.code).toBe(1)
      expect(ran.stderr).toMatch(/^error: forbidden \(403\): /)
      expect(ran.stdout).toBe('')
    }
    const users = await server.request('GET', '/api/v1/users', { token: owner.token })
    expect(users.body.data.map((u: { banned: boolean }) => u.banned)).toEqual([false, false, false])
    expect((await signIn(owner)).status).toBe(200)
  })

  it('unknown user, missing argument, unknown subcommand', async () => {
    const nobody = await cli(['users', 'ban', 'nobody@example.com'], owner.token)
    expect(nobody.code).toBe(1)
    expect(nobody.stderr).toBe('error: not_found: No user has the email nobody@example.com\n')
    const missing = await cli(['users', 'ban'], owner.token)
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('Missing the user: an id or an email')
    const unknown = await cli(['users', 'purge'], owner.token)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('Unknown command: users purge')
  })
})

describe('plinth keys', { timeout: 60_000 }, () => {
  it('create prints the secret once, alone on stdout; it works until revoke; list never shows it', async () => {
    const ran = await cli(
      ['keys', 'create', '--name', 'ci reader', '--scopes', 'collections/teams:read', '--expires', '30d'],
      owner.token,
    )
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toMatch(/^sk-[A-Za-z0-9_-]+\n$/)
    const secret = ran.stdout.trim()
    const id = /^Created key ([0-9a-f]{32}) "ci reader" \(collections\/teams:read; expires (\S+)\)\./.exec(ran.stderr)
    expect(id, ran.stderr).not.toBeNull()
    expect(Date.parse(id![2]!) / 1000 - Date.now() / 1000).toBeGreaterThan(29 * 86_400)
    expect(ran.stderr).not.toContain(secret)

    const used = await server.request('GET', '/api/v1/collections/teams/records', { token: secret })
    expect(used.status, used.text).toBe(200)

    for (const args of [
      ['keys', 'list'],
      ['keys', 'list', '--json'],
    ]) {
      const listed = await cli(args, owner.token)
      expect(listed.code, listed.stderr).toBe(0)
      expect(listed.stdout).toContain(id![1])
      expect(listed.stdout + listed.stderr).not.toContain(secret)
      expect(listed.stdout + listed.stderr).not.toContain(secret.slice(3, 20))
    }

    const revoked = await cli(['keys', 'revoke', id![1]!], owner.token)
    expect(revoked.code, revoked.stderr).toBe(0)
    expect(revoked.stdout).toBe(`Revoked key ${id![1]}\n`)
    expect(revoked.stdout + revoked.stderr).not.toContain(secret)
    expect((await server.request('GET', '/api/v1/collections/teams/records', { token: secret })).status).toBe(401)
  })

  it('--json: the creation answer carries the secret on stdout, stderr never', async () => {
    const ran = await cli(
      ['keys', 'create', '--name', 'json', '--scopes', 'collections/teams:read', '--json'],
      owner.token,
    )
    expect(ran.code, ran.stderr).toBe(0)
    const body = JSON.parse(ran.stdout)
    expect(body).toMatchObject({ label: 'json', capabilities: ['collections/teams:read'], expires_at: null })
    expect(body.raw).toMatch(/^sk-/)
    expect(ran.stderr).not.toContain(body.raw)
    const revoked = await cli(['keys', 'revoke', body.id, '--json'], owner.token)
    expect(JSON.parse(revoked.stdout)).toEqual({ success: true })
  })

  it("refusals are exit 1 with the code: a key managing keys, a scope the creator lacks, another user's key", async () => {
    const made = await cli(['keys', 'create', '--name', 'k', '--scopes', 'collections/teams:read'], owner.token)
    const secret = made.stdout.trim()
    const byKey = await cli(['keys', 'create', '--name', 'minted', '--scopes', 'collections/teams:read'], secret)
    expect(byKey.code).toBe(1)
    expect(byKey.stderr).toMatch(/^error: forbidden \(403\): API keys are managed from a signed-in session/)
    expect(byKey.stdout + byKey.stderr).not.toContain(secret)

    const beyond = await cli(['keys', 'create', '--name', 'x', '--scopes', 'system/users:update'], viewer.token)
    expect(beyond.code).toBe(1)
    expect(beyond.stderr).toBe('error: forbidden (403): A key cannot hold permissions you lack: system/users:update\n')
    expect(beyond.stdout).toBe('')

    const ownerKeyId = /Created key ([0-9a-f]{32})/.exec(made.stderr)![1]!
    const stolen = await cli(['keys', 'revoke', ownerKeyId], viewer.token)
    expect(stolen.code).toBe(1)
    expect(stolen.stderr).toMatch(/^error: not_found \(404\): /)
    expect((await server.request('GET', '/api/v1/collections/teams/records', { token: secret })).status).toBe(200)
  })

  it('usage: no --name, no --scopes, a bad --expires, a secret never taken as a flag (exit 2)', async () => {
    const cases: [string[], string][] = [
      [['keys', 'create', '--scopes', 'collections/teams:read'], '--name is required'],
      [['keys', 'create', '--name', 'n'], '--scopes is required'],
      [['keys', 'create', '--name', 'n', '--scopes', 'collections/teams:read', '--expires', 'soon'], '--expires takes'],
      [
        ['keys', 'create', '--name', 'n', '--scopes', 'collections/teams:read', '--token', 'x'],
        "Unknown option '--token'",
      ],
      [['keys', 'revoke'], 'Missing the key id'],
    ]
    for (const [args, message] of cases) {
      const ran = await cli(args, owner.token)
      expect(ran.code, args.join(' ')).toBe(2)
      expect(ran.stderr).toContain(message)
    }
  })
})
