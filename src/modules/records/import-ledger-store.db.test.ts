import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { DbHandle } from '../../lib/db/index.js'
import { dialects, openFixture, type DialectFixture } from '../../../test/support/dialects.js'
import { createImportLedgerStore, type LedgerJobRow } from './import-ledger-store.js'

// The import ledger on each dialect: made once, entries seeded once, the job's lock taken in turns, and
// long-unchanged jobs cleared out with their chunks.

const seed = (jobId: string, updatedAt = 1000): LedgerJobRow => ({
  job_id: jobId,
  status: 'pending',
  imported: 0,
  failed: 0,
  chunks: 0,
  errors: '[]',
  updated_at: updatedAt,
})

describe.each(dialects())('import ledger on %s', (kind) => {
  let fixture: DialectFixture
  let handle: DbHandle
  beforeEach(async () => {
    fixture = await openFixture(kind)
    handle = { kind, db: fixture.db, schema: kind === 'postgres' ? 'public' : null }
  })
  afterEach(async () => {
    await fixture.close()
  })

  it('is made once, even by callers racing (another store stands for another instance)', async () => {
    const ledger = createImportLedgerStore()
    await Promise.all([
      ledger.ensure(handle),
      createImportLedgerStore().ensure(handle),
      createImportLedgerStore().ensure(handle),
    ])
    await ledger.ensure(handle)
    expect(await ledger.read(handle.db, 'nope')).toBeUndefined()
  })

  it('seeds a job’s entry once; a later lock finds it as it was left', async () => {
    const ledger = createImportLedgerStore()
    await ledger.ensure(handle)
    await handle.db.transaction().execute(async (trx) => {
      const entry = await ledger.lock(trx, kind, seed('j1'))
      await ledger.addChunk(
        trx,
        { job_id: 'j1', chunk: 'k1', seq: 1, outcome: '{}' },
        { ...entry, imported: 5, chunks: 1, updated_at: 2000 },
      )
    })
    const again = await handle.db
      .transaction()
      .execute((trx) => ledger.lock(trx, kind, { ...seed('j1'), imported: 99 }))
    expect(again).toMatchObject({ job_id: 'j1', imported: 5, chunks: 1, updated_at: 2000 })
    expect(await ledger.chunk(handle.db, 'j1', 'k1')).toMatchObject({ seq: 1 })
    expect(await ledger.chunk(handle.db, 'j1', 'k2')).toBeUndefined()
  })

  it('a second writer of the job waits for the first and sees what it committed', async () => {
    const ledger = createImportLedgerStore()
    await ledger.ensure(handle)
    let releaseFirst = () => {}
    const held = new Promise<void>((resolve) => (releaseFirst = resolve))
    let firstLocked = () => {}
    const locked = new Promise<void>((resolve) => (firstLocked = resolve))
    const first = handle.db.transaction().execute(async (trx) => {
      const entry = await ledger.lock(trx, kind, seed('j2'))
      firstLocked()
      await held
      await ledger.addChunk(
        trx,
        { job_id: 'j2', chunk: 'a', seq: 1, outcome: '{}' },
        { ...entry, imported: 10, chunks: 1 },
      )
    })
    await locked
    const second = handle.db.transaction().execute((trx) => ledger.lock(trx, kind, seed('j2')))
    await new Promise((resolve) => setTimeout(resolve, 100))
    releaseFirst()
    await first
    expect(await second).toMatchObject({ imported: 10, chunks: 1 })
  })

  it('deleteStale removes jobs unchanged since the cut-off, with their chunks, and keeps the rest', async () => {
    const ledger = createImportLedgerStore()
    await ledger.ensure(handle)
    for (const [jobId, at] of [
      ['old', 100],
      ['new', 5000],
    ] as const) {
      await handle.db.transaction().execute(async (trx) => {
        const entry = await ledger.lock(trx, kind, seed(jobId, at))
        await ledger.addChunk(trx, { job_id: jobId, chunk: 'c', seq: 1, outcome: '{}' }, { ...entry, chunks: 1 })
      })
    }
    expect(await ledger.deleteStale(handle.db, 1000)).toBe(1)
    expect(await ledger.read(handle.db, 'old')).toBeUndefined()
    expect(await ledger.chunk(handle.db, 'old', 'c')).toBeUndefined()
    expect(await ledger.read(handle.db, 'new')).toMatchObject({ chunks: 1 })
    expect(await ledger.chunk(handle.db, 'new', 'c')).toMatchObject({ seq: 1 })
  })
})
