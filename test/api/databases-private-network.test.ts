import { createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { createTestDatabase, testDatabaseUrl } from '../support/postgres.js'
import { uniqueName } from './collections-support.js'

/**
 * POST /api/v1/databases and the outbound-address policy (decision 015): a PostgreSQL binding on a
 * loopback, private or link-local address needs a super_admin or ALLOW_PRIVATE_NETWORK, and is refused
 * before anything is contacted; every failure to open a binding answers the same error, so the endpoint
 * cannot tell a closed port from an open one.
 */

const PASSWORD = 'pw-0c41d9e2-never-shown'

/** A TCP server on loopback that counts the connections it accepts, then does `onConnection` with each. */
async function tcpServer(
  onConnection: (socket: Socket) => void,
): Promise<{ port: number; accepted: () => number; close: () => Promise<void> }> {
  let accepted = 0
  const server: Server = createServer((socket) => {
    accepted += 1
    socket.on('error', () => {})
    onConnection(socket)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    accepted: () => accepted,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

let strict: TestServer
let open: TestServer
let owner: Account
let admin: Account
let openAdmin: Account
/** Accepts and closes at once: an open port that is not PostgreSQL. */
let trap: Awaited<ReturnType<typeof tcpServer>>
/** Answers a PostgreSQL startup message with an HTTP error: an open port with another protocol. */
let chatter: Awaited<ReturnType<typeof tcpServer>>
let closedPort: number

beforeAll(async () => {
  trap = await tcpServer((socket) => socket.destroy())
  chatter = await tcpServer((socket) =>
    socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n')),
  )
  closedPort = await freePort()
  strict = await startServer()
  owner = await signUpOwner(strict)
  admin = await createAccount(strict, owner.token, { role: 'admin' })
  open = await startServer({ ALLOW_PRIVATE_NETWORK: '1' })
  const openOwner = await signUpOwner(open)
  openAdmin = await createAccount(open, openOwner.token, { role: 'admin' })
})
afterAll(async () => {
  await strict?.stop()
  await open?.stop()
  await trap?.close()
  await chatter?.close()
})

const register = (server: TestServer, token: string, name: string, url: string) =>
  server.request('POST', '/api/v1/databases', { token, body: { name, kind: 'postgres', url } })
const names = async (server: TestServer, token: string) =>
  ((await server.request('GET', '/api/v1/databases', { token })).body.data as { name: string }[]).map((d) => d.name)
const pgUrl = (host: string, port: number | string, query = '') =>
  `postgres://someone:${PASSWORD}@${host}:${port}/db${query}`

describe('a project admin (not super_admin), ALLOW_PRIVATE_NETWORK off', () => {
  const refused: [name: string, url: () => string][] = [
    ['127.0.0.1', () => pgUrl('127.0.0.1', trap.port)],
    ['localhost (resolved)', () => pgUrl('localhost', trap.port)],
    ['2130706433 (resolved as 127.0.0.1)', () => pgUrl('2130706433', trap.port)],
    ['[::1]', () => pgUrl('[::1]', trap.port)],
    ['[::ffff:127.0.0.1]', () => pgUrl('[::ffff:127.0.0.1]', trap.port)],
    ['[::ffff:0:127.0.0.1] (IPv4-translated)', () => pgUrl('[::ffff:0:127.0.0.1]', trap.port)],
    ['10.0.0.5', () => pgUrl('10.0.0.5', 5432)],
    ['169.254.169.254', () => pgUrl('169.254.169.254', 5432)],
    ['[fd00::5]', () => pgUrl('[fd00::5]', 5432)],
    ['a Unix socket as the host', () => `postgres://someone:${PASSWORD}@%2Fvar%2Frun%2Fpostgresql/db`],
    ['a Unix socket in ?host=', () => pgUrl('db.example.com', 5432, '?host=/var/run/postgresql')],
  ]
  for (const [name, url] of refused) {
    it(`${name}: 403 forbidden naming url, nothing contacted, nothing registered`, async () => {
      const binding = uniqueName('private')
      const reply = await register(strict, admin.token, binding, url())
      expect(reply.status, reply.text).toBe(403)
      expect(reply.body).toMatchObject({ error: 'forbidden', details: { fields: ['url'] } })
      expect(reply.text).not.toContain(PASSWORD)
      expect(trap.accepted()).toBe(0)
      expect(await names(strict, owner.token)).not.toContain(binding)
    })
  }
})

describe('who may reach private addresses', () => {
  it('a super_admin passes the check: the server is contacted, and a closed port is the uniform 400', async () => {
    const before = trap.accepted()
    const reply = await register(strict, owner.token, uniqueName('by_super'), pgUrl('127.0.0.1', trap.port))
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.error).toBe('invalid_request')
    expect(trap.accepted()).toBeGreaterThan(before)
  })

  it('with ALLOW_PRIVATE_NETWORK=1 a project admin passes the check', async () => {
    const before = trap.accepted()
    const reply = await register(open, openAdmin.token, uniqueName('by_admin'), pgUrl('127.0.0.1', trap.port))
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.error).toBe('invalid_request')
    expect(trap.accepted()).toBeGreaterThan(before)
  })

  describe.runIf(testDatabaseUrl() !== null)('with a real PostgreSQL on loopback (TEST_DATABASE_URL)', () => {
    let target: { url: string; drop: () => Promise<void> }
    beforeAll(async () => {
      target = await createTestDatabase(testDatabaseUrl()!)
    })
    afterAll(async () => {
      await target?.drop()
    })

    it('a project admin is refused (403), a super_admin registers it, and so does an admin with ALLOW_PRIVATE_NETWORK=1', async () => {
      const refused = await register(strict, admin.token, 'pg_by_admin', target.url)
      expect(refused.status, refused.text).toBe(403)
      const bySuper = await register(strict, owner.token, 'pg_by_super', target.url)
      expect(bySuper.status, bySuper.text).toBe(201)
      const byOpenAdmin = await register(open, openAdmin.token, 'pg_by_open_admin', target.url)
      expect(byOpenAdmin.status, byOpenAdmin.text).toBe(201)
    })
  })
})

describe('every failure to open a binding answers the same error', () => {
  const failures: [name: string, url: () => string][] = [
    ['a closed port', () => pgUrl('127.0.0.1', closedPort)],
    ['an open port that closes at once', () => pgUrl('127.0.0.1', trap.port)],
    ['an open port speaking another protocol', () => pgUrl('127.0.0.1', chatter.port)],
    ['a host name that does not resolve', () => pgUrl('no-such-host.invalid', 5432)],
  ]
  const bodies = new Map<string, { status: number; text: string }>()
  const pgFailures: [name: string, url: (base: string) => string][] = [
    // The test server may trust local connections, so the refused authentication is an unknown user.
    [
      'refused authentication',
      (base) => Object.assign(new URL(base), { username: uniqueName('nobody'), password: PASSWORD }).toString(),
    ],
    [
      'a database that does not exist',
      (base) => Object.assign(new URL(base), { pathname: `/${uniqueName('no_such_db')}` }).toString(),
    ],
  ]
  let target: { url: string; drop: () => Promise<void> } | null = null
  beforeAll(async () => {
    if (testDatabaseUrl()) target = await createTestDatabase(testDatabaseUrl()!)
  })
  afterAll(async () => {
    await target?.drop()
  })

  const check = (name: string, reply: Reply) => {
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body).toEqual({
      error: 'invalid_request',
      message:
        'The database could not be opened; check the URL, the credentials and that the server is reachable from this server',
      details: {},
    })
    bodies.set(name, { status: reply.status, text: reply.text })
  }

  for (const [name, url] of failures) {
    it(`${name} (as super_admin): 400 invalid_request, no reason given`, async () => {
      const binding = uniqueName('fails')
      check(name, await register(strict, owner.token, binding, url()))
      expect(await names(strict, owner.token)).not.toContain(binding)
    })
  }
  for (const [name, url] of pgFailures) {
    it.runIf(testDatabaseUrl() !== null)(`${name} (as super_admin): the same 400`, async () => {
      check(name, await register(strict, owner.token, uniqueName('fails'), url(target!.url)))
    })
  }

  it('the bodies are byte-identical; the reasons went to the log, without the password', () => {
    const distinct = new Set([...bodies.values()].map((b) => `${b.status} ${b.text}`))
    expect(bodies.size).toBeGreaterThanOrEqual(failures.length)
    expect([...distinct]).toHaveLength(1)
    const logged = strict.logs.filter((line) => line.includes('database binding could not be opened'))
    expect(logged.length).toBeGreaterThanOrEqual(bodies.size)
    expect(logged.join('\n')).toMatch(/ECONNREFUSED/)
    expect(strict.logs.join('\n')).not.toContain(PASSWORD)
  })
})
