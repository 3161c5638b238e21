import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { send, type Reply } from '../support/harness.js'
import { createTestDatabase, testDatabaseUrl } from '../support/postgres.js'
import { kill, serve, type Running } from '../support/serve-process.js'

// A real SIGKILL of a server process (bin/plinth.js) while a chunk of an import job is being written, then a
// restart on the same DATA_DIR (or PostgreSQL database) and the chunk sent again, as a client that saw no
// answer does. Where the kill lands is up to the scheduler: before the chunk's commit (nothing of it is
// kept, the resend stores it) or after (the resend is recognised and answered as the first time). Either
// way the job's tallies must equal the rows stored, with no row twice. The exact window between the rows'
// commit and the answer is hit deterministically by records-import-chunks.test.ts (the importPace hook).

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('SIGKILL during an import job chunk, then a restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-kill-'))
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

  it('the job counts every chunk once and equals the rows stored, wherever the kill lands', {
    timeout: 180_000,
  }, async () => {
    running = await serve(env)
    const call = (method: string, path: string, options: Parameters<typeof send>[3] = {}): Promise<Reply> =>
      send(running!.url, method, path, options)
    const signUp = await call('POST', '/api/auth/sign-up/email', {
      body: { email: 'owner@example.com', password: 'owner password', name: 'Owner' },
    })
    expect(signUp.status, signUp.text).toBe(200)
    const token: string = signUp.body.token
    const created = await call('POST', '/api/v1/collections', {
      token,
      body: { name: 'rows', fields: [{ name: 'n', type: 'integer', required: true, unique: true }] },
    })
    expect(created.status, created.text).toBe(201)
    const job = await call('POST', '/api/v1/collections/rows/records/import-jobs', { token, body: {} })
    expect(job.status, job.text).toBe(201)
    const jobId: string = job.body.jobId
    const chunkPath = `/api/v1/collections/rows/records/import-ndjson?jobId=${jobId}`
    const chunk = (round: number) =>
      Array.from({ length: 1000 }, (_, i) => JSON.stringify({ n: round * 1000 + i + 1 })).join('\n')
    const sendChunk = (round: number) =>
      call('POST', chunkPath, { token, rawBody: chunk(round), headers: { 'content-type': 'application/x-ndjson' } })

    // Kill at different moments of a chunk's life (read, checked, written, committed, answered): each round
    // first times an ordinary chunk on the running server, then kills the next one at a fraction of that.
    // The time only places the kill; nothing is asserted about it.
    const fractions = [0.3, 0.6, 0.85, 1, 1.15]
    let sent = 0
    for (const fraction of fractions) {
      const started = performance.now()
      const ordinary = await sendChunk(sent++)
      expect(ordinary.body).toMatchObject({ imported: 1000, failed: 0 })
      const took = performance.now() - started

      const killed = sent++
      const inFlight = sendChunk(killed).catch(() => null)
      await sleep(took * fraction)
      await kill(running)
      await inFlight
      running = await serve(env)

      const resent = await sendChunk(killed)
      expect(resent.status, resent.text).toBe(200)
      expect(resent.body).toMatchObject({ imported: 1000, failed: 0, errors: [] })
      const progress = await call('GET', `/api/v1/collections/rows/records/import-jobs/${jobId}`, { token })
      expect(progress.body).toMatchObject({ status: 'pending', imported: sent * 1000, failed: 0, chunks: sent })
      const listed = await call('GET', '/api/v1/collections/rows/records?limit=1&page=1', { token })
      expect(listed.body.total).toBe(sent * 1000)
    }
    const done = await call('POST', `/api/v1/collections/rows/records/import-jobs/${jobId}/finalize`, { token })
    expect(done.body).toMatchObject({ status: 'complete', imported: sent * 1000, failed: 0, chunks: sent })
  })
})
