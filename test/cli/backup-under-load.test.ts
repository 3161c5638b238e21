import { spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort, send, type Reply } from '../support/harness.js'
import { kill, serve, type Running } from '../support/serve-process.js'

// `plinth backup` as a real process against a real server process taking writes, then `plinth restore` into
// a fresh DATA_DIR and a server on it. Every record acknowledged before the backup began must be there;
// no record may be torn (its fields are derived from its `n`, so a half-written or mixed row shows); the
// files come back byte for byte. SQLite only: on PostgreSQL backup refuses (backup-restore.test.ts).

const bin = new URL('../../bin/plinth.js', import.meta.url).pathname
const baseEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }
const sha = (text: string | Uint8Array) => createHash('sha256').update(text).digest('hex')
const fieldsOf = (n: number) => ({ n, label: `row-${n}`, square: n * n, digest: sha(String(n)) })

/** Runs a plinth command as a child process without blocking this process's event loop (the writer runs here). */
function plinth(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { ...baseEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })))
}

describe('plinth backup while a server takes writes, then plinth restore', () => {
  const dirs: string[] = []
  const fresh = (prefix: string) => {
    const dir = mkdtempSync(join(tmpdir(), prefix))
    dirs.push(dir)
    return dir
  }
  const running: Running[] = []
  afterAll(async () => {
    for (const server of running) await kill(server)
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  it('every record acknowledged before the backup began is restored, none torn, files byte-identical', {
    timeout: 300_000,
  }, async () => {
    const dataDir = fresh('plinth-live-')
    // A known port: signed upload and download URLs point at PUBLIC_URL.
    const at = async () => {
      const port = await freePort()
      return { HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` }
    }
    const env = { DATA_DIR: dataDir, PASSWORD_HASH_ITERATIONS: '1000' }
    const server = await serve({ ...env, ...(await at()) })
    running.push(server)
    const call = (method: string, path: string, options: Parameters<typeof send>[3] = {}): Promise<Reply> =>
      send(server.url, method, path, options)

    const signUp = await call('POST', '/api/auth/sign-up/email', {
      body: { email: 'owner@example.com', password: 'owner password', name: 'Owner' },
    })
    expect(signUp.status, signUp.text).toBe(200)
    const token: string = signUp.body.token
    const fields = [
      { name: 'n', type: 'integer', required: true, unique: true },
      { name: 'label', type: 'text', required: true },
      { name: 'square', type: 'integer', required: true },
      { name: 'digest', type: 'text', required: true },
    ]
    for (const body of [
      { name: 'ledger', fields },
      // Its own database file (projects/<id>/collections/<id>.db): a backup must take it too.
      { name: 'vault', storageType: 'durable_object', fields },
      // An SQLite file in object storage: its unpublished writes live in the working copy (r2-sql/work/…).
      { name: 'sheet', storageType: 'r2_sql', fields },
    ]) {
      const created = await call('POST', '/api/v1/collections', { token, body })
      expect(created.status, created.text).toBe(201)
    }
    const seeded: { collection: string; id: string; n: number }[] = []
    for (const collection of ['vault', 'sheet']) {
      for (let n = 1; n <= 5; n++) {
        const reply = await call('POST', `/api/v1/collections/${collection}/records`, { token, body: fieldsOf(n) })
        expect(reply.status, reply.text).toBe(201)
        seeded.push({ collection, id: reply.body.id, n })
      }
    }

    const uploads = [randomBytes(300_000), randomBytes(7_001)]
    const fileIds: string[] = []
    for (const [i, bytes] of uploads.entries()) {
      const grant = await call('POST', '/api/v1/files/upload-token', {
        token,
        body: { filename: `part-${i}.bin`, mime_type: 'application/octet-stream', size_bytes: bytes.length },
      })
      expect(grant.status, grant.text).toBe(200)
      const put = await fetch(grant.body.uploadUrl, {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream' },
        body: bytes,
      })
      expect(put.status).toBe(200)
      const confirmed = await call('POST', `/api/v1/files/confirm-upload/${grant.body.id}`, { token })
      expect(confirmed.status, confirmed.text).toBe(200)
      fileIds.push(grant.body.id)
    }

    // The writer: four clients creating records as fast as the server answers, each id noted once acknowledged.
    const acknowledged: { id: string; n: number }[] = []
    let next = 1
    let writing = true
    const writer = async () => {
      while (writing) {
        const n = next++
        const reply = await call('POST', '/api/v1/collections/ledger/records', { token, body: fieldsOf(n) })
        if (reply.status === 201) acknowledged.push({ id: reply.body.id, n })
        else throw new Error(`write ${n} answered ${reply.status}: ${reply.text}`)
      }
    }
    const writers = [writer(), writer(), writer(), writer()]
    while (acknowledged.length < 200) await new Promise((resolve) => setImmediate(resolve))

    const before = acknowledged.length
    const ackedBefore = acknowledged.slice(0, before)
    const backupDir = join(fresh('plinth-backup-'), 'copy')
    const backup = await plinth(['backup', backupDir], { DATA_DIR: dataDir })
    const ackedDuring = acknowledged.length - before
    writing = false
    await Promise.all(writers)
    expect(backup.code, backup.stderr).toBe(0)
    expect(backup.stdout).toContain('system.db: ')
    expect(backup.stdout).toMatch(/Backed up \d+ databases and \d+ files to /)
    // The load was real: the server acknowledged writes while the backup ran.
    expect(ackedDuring).toBeGreaterThan(0)

    const manifest = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8'))
    const paths: string[] = manifest.databases.map((d: { path: string }) => d.path)
    expect(paths[0]).toBe('system.db')
    expect(paths.some((p) => /^projects\/[a-z0-9_]+\.db$/.test(p))).toBe(true)
    expect(paths.some((p) => /^projects\/[a-z0-9_]+\/collections\/[a-z0-9]+\.db$/.test(p))).toBe(true)
    expect(paths.some((p) => /^r2-sql\/work\/local\/[a-z0-9_]+\/[a-z0-9]+\.db$/.test(p))).toBe(true)
    expect(manifest.files.map((f: { path: string }) => f.path)).toContain('secret.key')
    expect(manifest.secretKey).toBe('file')
    expect(manifest.migration.last).toMatch(/^\d{4}-/)
    expect(statSync(join(backupDir, 'secret.key')).mode & 0o077).toBe(0)
    await kill(server)

    // Restore refuses a DATA_DIR that is not empty, and writes nothing there.
    const refused = await plinth(['restore', backupDir], { DATA_DIR: dataDir })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('is not empty')

    const restoredDir = fresh('plinth-restored-')
    const restore = await plinth(['restore', backupDir], { DATA_DIR: restoredDir })
    expect(restore.code, restore.stderr).toBe(0)
    expect(restore.stdout).toContain('Verified: integrity_check ok, row counts and checksums match')

    const restored = await serve({ ...env, ...(await at()), DATA_DIR: restoredDir })
    running.push(restored)
    const get = (path: string) => send(restored.url, 'GET', path, { token })

    const rows = new Map<string, Record<string, unknown>>()
    let cursor: string | null = ''
    while (cursor !== null) {
      const page: Reply = await get(`/api/v1/collections/ledger/records?limit=100&cursor=${encodeURIComponent(cursor)}`)
      expect(page.status, page.text).toBe(200)
      for (const row of page.body.data) rows.set(row.id, row)
      cursor = page.body.cursors.next
    }
    const missing = ackedBefore.filter((a) => !rows.has(a.id))
    expect(missing).toEqual([])
    // No torn row among all restored (those written during the backup included): every field agrees with n.
    const torn = [...rows.values()].filter((row) => {
      const expected = fieldsOf(Number(row.n))
      return row.label !== expected.label || row.square !== expected.square || row.digest !== expected.digest
    })
    expect(torn).toEqual([])
    expect(rows.size).toBeGreaterThanOrEqual(before)
    expect(rows.size).toBeLessThanOrEqual(next - 1)

    for (const { collection, id, n } of seeded) {
      const row = await get(`/api/v1/collections/${collection}/records/${id}`)
      expect(row.status, `${collection}: ${row.text}`).toBe(200)
      expect(row.body.data).toMatchObject(fieldsOf(n))
    }
    for (const [i, id] of fileIds.entries()) {
      const link = await get(`/api/v1/files/download-token/${id}`)
      expect(link.status, link.text).toBe(200)
      const bytes = new Uint8Array(await (await fetch(link.body.downloadUrl)).arrayBuffer())
      expect(sha(bytes)).toBe(sha(uploads[i]!))
    }
  })
})
