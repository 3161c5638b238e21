import { randomInt } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type RequestOptions, type TestServer } from '../support/harness.js'
import { createLoadGate, type HeldLoad } from '../support/load-gate.js'
import { startSibling } from '../support/sibling.js'

/**
 * ARCHITECTURE.md § Scale-out: two instances on one PostgreSQL and one Redis behave as one. Instance B is
 * a sibling of A (same DATABASE_URL, SECRET_KEY and REDIS_URL). Each check first makes B cache what it is
 * about to lose, then changes it on A, then asks B at once: no waiting, no retries.
 */
const databaseUrl = process.env.TEST_DATABASE_URL
const redisUrl = process.env.TEST_REDIS_URL
const enabled = Boolean(databaseUrl && redisUrl)

// Rate limits live in the shared Redis for a minute and are counted per client IP; every call comes from its
// own address (TRUST_PROXY), so neither this run's setup nor an earlier run uses up the limit under test.
const subnet = `10.${randomInt(256)}`
let ipCounter = 0
const freshIp = () => `${subnet}.${(ipCounter >> 8) & 255}.${ipCounter++ & 255}`

function call(
  server: TestServer,
  method: string,
  path: string,
  options: RequestOptions & { ip?: string } = {},
): Promise<Reply> {
  return server.request(method, path, {
    ...options,
    headers: { ...options.headers, 'X-Forwarded-For': options.ip ?? freshIp() },
  })
}

describe.runIf(enabled)(
  'scale-out: two instances share sessions, keys, roles and limits (runs only when TEST_DATABASE_URL and TEST_REDIS_URL are both set)',
  () => {
    // The harness gives A its own REDIS_PREFIX on TEST_REDIS_URL; the sibling B copies URL and prefix from A.
    const env = { REDIS_URL: redisUrl ?? '', AUTH_RATE_LIMIT: '5', TRUST_PROXY: 'true' }
    let a: TestServer
    let b: TestServer
    let owner: string
    let emailCounter = 0
    // Holds B's first use of a credential after its database reads (see auth-cache-races.test.ts).
    const gate = createLoadGate()

    async function signIn(server: TestServer, email: string, password: string): Promise<string> {
      const reply = await call(server, 'POST', '/api/auth/sign-in/email', { body: { email, password } })
      expect(reply.status, reply.text).toBe(200)
      return reply.body.token
    }

    /** An account created on A, signed in on `on`. */
    async function account(role: string, on: TestServer): Promise<{ id: string; email: string; token: string }> {
      const email = `${role}-${++emailCounter}-${subnet}@example.com`
      const created = await call(a, 'POST', '/api/v1/users', {
        token: owner,
        body: { email, password: 'a good password', role },
      })
      expect(created.status, created.text).toBe(201)
      return { id: created.body.data.id, email, token: await signIn(on, email, 'a good password') }
    }

    beforeAll(async () => {
      a = await startServer(env)
      b = await startSibling(a, env, { credentialLoadPace: gate.pace })
      const signUp = await call(a, 'POST', '/api/auth/sign-up/email', {
        body: { email: 'owner@example.com', password: 'owner password', name: 'Owner' },
      })
      expect(signUp.status, signUp.text).toBe(200)
      owner = signUp.body.token
    })
    afterAll(async () => {
      await b?.stop()
      await a?.stop()
    })

    it('both instances run on PostgreSQL and Redis, on different ports', async () => {
      expect(a.url).not.toBe(b.url)
      for (const server of [a, b]) {
        const health = await server.request('GET', '/health')
        expect(health.body).toMatchObject({ status: 'ok', database: 'postgres', cache: 'redis' })
      }
    })

    it('a session created on A works on B', async () => {
      const onA = await call(a, 'GET', '/api/auth/get-session', { token: owner })
      const onB = await call(b, 'GET', '/api/auth/get-session', { token: owner })
      expect(onB.status, onB.text).toBe(200)
      expect(onB.body.user).toMatchObject({ id: onA.body.user.id, role: 'super_admin' })
      expect(onB.body.session.id).toBe(onA.body.session.id)
    })

    it('signing out on A makes the token 401 on B at once, though B had it cached', async () => {
      const token = await signIn(a, 'owner@example.com', 'owner password')
      expect((await call(b, 'GET', '/api/auth/get-session', { token })).status).toBe(200)
      const out = await call(a, 'POST', '/api/auth/sign-out', { token })
      expect(out.status, out.text).toBe(200)
      const after = await call(b, 'GET', '/api/auth/get-session', { token })
      expect(after.status).toBe(401)
      expect(after.body.error).toBe('unauthorized')
    })

    it('a ban on A ends the session on B at once', async () => {
      const person = await account('viewer', b)
      expect((await call(b, 'GET', '/api/auth/get-session', { token: person.token })).status).toBe(200)
      expect(
        (await call(a, 'PATCH', `/api/v1/users/${person.id}`, { token: owner, body: { banned: true } })).status,
      ).toBe(200)
      expect((await call(b, 'GET', '/api/auth/get-session', { token: person.token })).status).toBe(401)
    })

    it("a role change on A shows on B's next request", async () => {
      const person = await account('viewer', b)
      const before = await call(b, 'GET', '/api/auth/get-session', { token: person.token })
      expect(before.body.user.role).toBe('viewer')
      expect((await call(b, 'GET', '/api/v1/users', { token: person.token })).status).toBe(403)

      const change = await call(a, 'PATCH', `/api/v1/users/${person.id}`, { token: owner, body: { role: 'admin' } })
      expect(change.status, change.text).toBe(200)

      const after = await call(b, 'GET', '/api/auth/get-session', { token: person.token })
      expect(after.status).toBe(200)
      expect(after.body.user.role).toBe('admin')
      expect((await call(b, 'GET', '/api/v1/users', { token: person.token })).status).toBe(200)
    })

    it('an API key revoked on A is 401 on B', async () => {
      const created = await call(a, 'POST', '/api/auth/api-keys', {
        token: owner,
        body: { label: 'shared', capabilities: ['system/users:read'] },
      })
      expect(created.status, created.text).toBe(201)
      const raw = created.body.raw as string
      expect((await call(b, 'GET', '/api/v1/users', { token: raw })).status).toBe(200)
      const revoke = await call(a, 'DELETE', `/api/auth/api-keys/${created.body.id}`, { token: owner })
      expect(revoke.status, revoke.text).toBe(200)
      const after = await call(b, 'GET', '/api/v1/users', { token: raw })
      expect(after.status).toBe(401)
      expect(after.body.error).toBe('unauthorized')
    })

    /** Starts B's `firstUse` held after its reads, runs `change` on A (which must answer 200), lets B go on. */
    async function race(held: HeldLoad, firstUse: () => Promise<Reply>, change: () => Promise<Reply>): Promise<Reply> {
      const pending = firstUse()
      await held.reached
      const changed = await change()
      expect(changed.status, changed.text).toBe(200)
      held.release()
      return pending
    }

    it('a sign-out on A that lands while B is loading the token for its first use: B answers 401 afterwards', async () => {
      const token = await signIn(a, 'owner@example.com', 'owner password')
      const first = await race(
        gate.hold('session'),
        () => call(b, 'GET', '/api/auth/get-session', { token }),
        () => call(a, 'POST', '/api/auth/sign-out', { token }),
      )
      expect(first.status, first.text).toBe(200)
      const after = await call(b, 'GET', '/api/auth/get-session', { token })
      expect(after.status, after.text).toBe(401)
      expect(after.body.error).toBe('unauthorized')
    })

    it('an API key revoked on A while B is loading it for its first use: B answers 401 afterwards', async () => {
      const created = await call(a, 'POST', '/api/auth/api-keys', {
        token: owner,
        body: { label: 'raced', capabilities: ['system/users:read'] },
      })
      expect(created.status, created.text).toBe(201)
      const raw = created.body.raw as string
      const first = await race(
        gate.hold('api_key'),
        () => call(b, 'GET', '/api/v1/users', { token: raw }),
        () => call(a, 'DELETE', `/api/auth/api-keys/${created.body.id}`, { token: owner }),
      )
      expect(first.status, first.text).toBe(200)
      const after = await call(b, 'GET', '/api/v1/users', { token: raw })
      expect(after.status, after.text).toBe(401)
      expect(after.body.error).toBe('unauthorized')
    })

    it('the sign-in rate limit (AUTH_RATE_LIMIT=5) is shared: 3 attempts on A and 3 on B, the sixth is 429', async () => {
      const ip = `${subnet}.255.${randomInt(1, 255)}`
      const attempt = (server: TestServer) =>
        call(server, 'POST', '/api/auth/sign-in/email', {
          ip,
          body: { email: 'owner@example.com', password: 'not the password' },
        })
      const statuses: number[] = []
      for (const server of [a, a, a, b, b]) statuses.push((await attempt(server)).status)
      expect(statuses).toEqual([401, 401, 401, 401, 401])
      const sixth = await attempt(b)
      expect(sixth.status, sixth.text).toBe(429)
      expect(sixth.body.error).toBe('rate_limited')
      expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0)
      // Even the right password is refused from that address now, on either instance.
      const right = await call(a, 'POST', '/api/auth/sign-in/email', {
        ip,
        body: { email: 'owner@example.com', password: 'owner password' },
      })
      expect(right.status).toBe(429)
    })

    it("a grants change on A applies on B's next request, both ways", async () => {
      const person = await account('viewer', b)
      const roles = await call(a, 'GET', '/api/v1/roles', { token: owner })
      const viewer = (roles.body.data as { id: string; name: string }[]).find((r) => r.name === 'viewer')!
      const original = (await call(a, 'GET', `/api/v1/roles/${viewer.id}/grants`, { token: owner })).body.data as {
        resource: string
        action: string
      }[]
      const base = original.map((g) => ({ resource: g.resource, action: g.action }))

      expect((await call(b, 'GET', '/api/v1/settings', { token: person.token })).status).toBe(403)
      const grant = await call(a, 'PUT', `/api/v1/roles/${viewer.id}/grants`, {
        token: owner,
        body: { grants: [...base, { resource: 'system/settings', action: 'read' }] },
      })
      expect(grant.status, grant.text).toBe(200)
      expect((await call(b, 'GET', '/api/v1/settings', { token: person.token })).status).toBe(200)

      const revoke = await call(a, 'PUT', `/api/v1/roles/${viewer.id}/grants`, { token: owner, body: { grants: base } })
      expect(revoke.status, revoke.text).toBe(200)
      expect((await call(b, 'GET', '/api/v1/settings', { token: person.token })).status).toBe(403)
    })

    describe('records: totals and ETags (decision 025)', () => {
      let seq = 0
      const records = (name: string, query = '') => `/api/v1/collections/${name}/records${query}`
      // limit=1: a full page, so the total is counted (and cached) rather than inferred from a short page.
      const published = encodeURIComponent(JSON.stringify({ status: { _eq: 'published' } }))
      const page = (name: string) => records(name, `?limit=1&filter=${published}`)

      async function total(server: TestServer, name: string): Promise<number> {
        const reply = await call(server, 'GET', page(name), { token: owner })
        expect(reply.status, reply.text).toBe(200)
        return reply.body.total
      }
      async function tagOf(server: TestServer, path: string): Promise<string> {
        const reply = await call(server, 'GET', path, { token: owner })
        expect(reply.status, reply.text).toBe(200)
        expect(reply.headers.get('etag')).toMatch(/^W\//)
        return reply.headers.get('etag')!
      }
      async function create(server: TestServer, name: string, status: string): Promise<string> {
        const reply = await call(server, 'POST', records(name), { token: owner, body: { title: status, status } })
        expect(reply.status, reply.text).toBe(201)
        return reply.body.id
      }
      async function collection(): Promise<string> {
        const name = `shared_counts_${seq++}_${subnet.replace('.', '_')}`
        const fields = [
          { name: 'title', type: 'text', required: true },
          { name: 'status', type: 'text', required: false },
        ]
        const reply = await call(a, 'POST', '/api/v1/collections', { token: owner, body: { name, fields } })
        expect(reply.status, reply.text).toBe(201)
        return name
      }

      it('a total B has cached is exact right after each kind of write on A', async () => {
        const name = await collection()
        const ids = [
          await create(a, name, 'published'),
          await create(a, name, 'published'),
          await create(a, name, 'draft'),
        ]
        const writes: [label: string, write: () => Promise<Reply>, expected: number][] = [
          [
            'create',
            () => call(a, 'POST', records(name), { token: owner, body: { title: 't', status: 'published' } }),
            3,
          ],
          [
            'update',
            () => call(a, 'PATCH', records(name, `/${ids[2]}`), { token: owner, body: { status: 'published' } }),
            4,
          ],
          ['delete', () => call(a, 'DELETE', records(name, `/${ids[0]}`), { token: owner }), 3],
          ['restore', () => call(a, 'POST', records(name, `/${ids[0]}/restore`), { token: owner }), 4],
          [
            'bulk delete',
            () => call(a, 'DELETE', records(name, '/bulk'), { token: owner, body: { ids: ids.slice(0, 2) } }),
            2,
          ],
          [
            'import',
            () =>
              call(a, 'POST', records(name, '/import-ndjson'), {
                token: owner,
                rawBody: `${JSON.stringify({ title: 'i', status: 'published' })}\n${JSON.stringify({ title: 'j', status: 'published' })}`,
                headers: { 'content-type': 'application/x-ndjson' },
              }),
            4,
          ],
          ['truncate', () => call(a, 'POST', `/api/v1/collections/${name}/truncate`, { token: owner }), 0],
        ]
        let expected = 2
        for (const [label, write, after] of writes) {
          expect(await total(b, name), `B before ${label}`).toBe(expected)
          expect(await total(b, name), `B before ${label}, cached`).toBe(expected)
          const reply = await write()
          expect(reply.status, `${label}: ${reply.text}`).toBeLessThan(300)
          expect(await total(b, name), `B after ${label}`).toBe(after)
          expect(await total(a, name), `A after ${label}`).toBe(after)
          expected = after
        }
      })

      it('both instances give the same ETag; a write on B makes the tag stale on A at once', async () => {
        const name = await collection()
        const id = await create(a, name, 'published')
        for (const path of [page(name), records(name, `/${id}`)]) {
          const etag = await tagOf(a, path)
          expect(await tagOf(b, path)).toBe(etag)
          const notModified = await call(a, 'GET', path, { token: owner, headers: { 'If-None-Match': etag } })
          expect(notModified.status, notModified.text).toBe(304)
          await create(b, name, 'published')
          const after = await call(a, 'GET', path, { token: owner, headers: { 'If-None-Match': etag } })
          expect(after.status, after.text).toBe(200)
          expect(after.headers.get('etag')).not.toBe(etag)
        }
      })
    })
  },
)
