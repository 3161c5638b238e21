import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { brick, documentOf } from '../../src/modules/blueprints/document/test-document.js'
import { send, type Reply } from '../support/harness.js'
import { createTestDatabase, testDatabaseUrl } from '../support/postgres.js'
import { kill, serve, type Running } from '../support/serve-process.js'

// A real SIGKILL of a server (bin/plinth.js) in the middle of a server-side install (?apply=true), then a
// restart on the same data and the same install asked for again, as a client that saw no answer does. The
// run the kill interrupted was never answered; the new one takes over its rows: what the dead one wrote is
// found by its natural key and kept (nothing written twice: 200 seed rows stay 200, each collection once),
// the rest is made, and the run completes. Where the kill lands is up to the scheduler; each round kills
// at another fraction of an ordinary install's time.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const collections = Array.from({ length: 6 }, (_, i) => `c${i}`)
const document = documentOf([
  ...collections.map((c) =>
    brick(`collection id=${c}`, {
      name: `\${params.prefix}_${c}`,
      accessPreset: 'private',
      fields: [{ name: 'title', type: 'text', required: false, unique: false, indexed: false }],
    }),
  ),
  brick('collection id=items', {
    name: '${params.prefix}_items',
    accessPreset: 'private',
    fields: [
      { name: 'slug', type: 'text', required: true, unique: false, indexed: true },
      { name: 'n', type: 'integer', required: false, unique: false, indexed: false },
    ],
  }),
  brick('records id=seed needs=items', {
    collection: '${params.prefix}_items',
    rows: Array.from({ length: 200 }, (_, i) => ({ slug: `item-${i}`, n: i })),
  }),
  brick('view id=all needs=items', {
    name: 'All ${params.prefix}',
    collection: '${params.prefix}_items',
    shared: true,
  }),
])

describe('SIGKILL during a server-side blueprint install, then a restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-bp-kill-'))
  let database: { url: string; drop: () => Promise<void> } | null = null
  let env: Record<string, string>
  let running: Running | null = null

  beforeAll(async () => {
    if (testDatabaseUrl()) database = await createTestDatabase(testDatabaseUrl()!)
    env = {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      PASSWORD_HASH_ITERATIONS: '1000',
      ...(database ? { DATABASE_URL: database.url, SECRET_KEY: randomBytes(32).toString('hex') } : {}),
    }
  })
  afterAll(async () => {
    if (running) await kill(running)
    await database?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('installing again after the kill completes it, writing nothing twice', { timeout: 240_000 }, async () => {
    running = await serve(env)
    const call = (method: string, path: string, options: Parameters<typeof send>[3] = {}): Promise<Reply> =>
      send(running!.url, method, path, options)
    const signUp = await call('POST', '/api/auth/sign-up/email', {
      body: { email: 'owner@example.com', password: 'owner password', name: 'Owner' },
    })
    expect(signUp.status, signUp.text).toBe(200)
    const token: string = signUp.body.token
    const install = (prefix: string) =>
      call('POST', '/api/v1/blueprints/installs?apply=true', { token, body: { source: document, params: { prefix } } })

    let interrupted = 0
    for (const [round, fraction] of [0.2, 0.5, 0.8].entries()) {
      // An ordinary install times this machine; the next one, in another namespace, is killed part way.
      const started = performance.now()
      const ordinary = await install(`ok${round}`)
      expect(ordinary.status, ordinary.text).toBe(201)
      expect(ordinary.body.data.status).toBe('complete')
      const took = performance.now() - started

      const prefix = `k${round}`
      const inFlight = install(prefix).catch(() => null)
      await sleep(took * fraction)
      await kill(running)
      await inFlight
      running = await serve(env)

      const again = await install(prefix)
      // The server's log lines name a database error the answer does not.
      const errors = () =>
        running!
          .output()
          .split('\n')
          .filter((line) => /"level":(50|60)/.test(line))
          .join('\n')
      expect(again.status, `${again.text}\n${errors()}`).toBe(201)
      expect(again.body.data.status, JSON.stringify(again.body.data.resources)).toBe('complete')
      const schema = await call('GET', '/api/v1/collections', { token })
      const names = (schema.body.data as { name: string }[])
        .map((c) => c.name)
        .filter((n) => n.startsWith(`${prefix}_`))
      expect(names.sort()).toEqual([...collections.map((c) => `${prefix}_${c}`), `${prefix}_items`].sort())
      const records = await call('GET', `/api/v1/collections/${prefix}_items/records?limit=1`, { token })
      expect(records.body.total).toBe(200)
      const views = await call('GET', '/api/v1/views?limit=100', { token })
      expect((views.body.data as { name: string }[]).filter((v) => v.name === `All ${prefix}`)).toHaveLength(1)
      // The interrupted run (if the kill came after it was opened) is superseded by the one that finished it.
      const runs = await call('GET', '/api/v1/blueprints/installs?blueprint=help-desk', { token })
      const mine = (runs.body.data as { namespace: string; status: string }[]).filter((r) => r.namespace === prefix)
      expect(mine[0]!.status).toBe('complete')
      for (const earlier of mine.slice(1)) expect(earlier.status).toBe('superseded')
      if (mine.length > 1) interrupted++
      // A plan finds everything as installed.
      const plan = await call('POST', '/api/v1/blueprints/plan', {
        token,
        body: { source: document, params: { prefix } },
      })
      expect(new Set(plan.body.data.verdicts.map((v: { verdict: string }) => v.verdict))).toEqual(new Set(['NOOP']))
    }
    // At least one kill landed inside a run (else this test proved nothing).
    expect(interrupted).toBeGreaterThan(0)
  })
})
