import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Kysely } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { openSqlite, runMigrations } from '../../../lib/db/index.js'
import { idPattern } from '../../../lib/ids.js'
import { createLogger } from '../../../lib/log.js'
import { systemMigrations } from '../../../migrations/system/index.js'
import { newRunId } from './run-ids.js'
import type { RunFinish, RunRow, RunWrites, StepLogRow } from './run-rows.js'
import { createRunWriter } from './run-writer.js'
import { chunksOf, createRunsStore, type RunsStore } from './runs-store.js'

const log = createLogger('silent')
const counters = { countRun: async () => {}, countRuns: async () => {} }
const now = 1_700_000_000_000

function runRow(id: string, flowId = 'f1'): RunRow {
  return {
    id,
    project_id: 'p1',
    flow_id: flowId,
    version: 1,
    status: 'running',
    trigger_type: 'webhook',
    trigger: '{"body":{"n":2}}',
    acting: '{}',
    error: null,
    depth: 0,
    parent_run_id: null,
    created_at: now,
    started_at: now,
    finished_at: null,
    duration_ms: null,
    instance_id: 'i1',
    lease_until: now + 120_000,
    retry_of: null,
  }
}

function stepLog(runId: string, position: number): StepLogRow {
  return {
    run_id: runId,
    position,
    project_id: 'p1',
    step_key: `s${position}`,
    type: 'set_variable',
    status: 'completed',
    input: '{}',
    output: '1',
    error: null,
    logs: null,
    attempts: 1,
    started_at: now,
    duration_ms: 0,
  }
}

function finish(runId: string): RunFinish {
  return {
    projectId: 'p1',
    flowId: 'f1',
    runId,
    status: 'completed',
    error: null,
    finishedAt: now + 5,
    durationMs: 5,
    keep: 'all',
  }
}

let db: Kysely<any> | null = null
afterEach(async () => {
  await db?.destroy()
  db = null
})

/** A system database with a project and an active flow `f1`, and the runs store on it. */
async function realStore(): Promise<{ store: RunsStore; db: Kysely<any> }> {
  db = openSqlite(join(mkdtempSync(join(tmpdir(), 'plinth-run-writer-')), 'system.db'))
  await runMigrations(db, 'sqlite', systemMigrations)
  await db.insertInto('projects').values({ id: 'p1', name: 'P', is_default: 1, created_at: 0, updated_at: 0 }).execute()
  await db
    .insertInto('flows')
    .values({
      id: 'f1',
      project_id: 'p1',
      slug: 'f',
      name: 'F',
      description: '',
      icon: 'bolt',
      color: '#6750a4',
      status: 'active',
      trigger_type: 'webhook',
      trigger_config: '{}',
      operations: '[]',
      options: '{}',
      collections: '["*"]',
      created_by: null,
      run_as: 'triggering_user',
      current_version: 1,
      published_version: 1,
      webhook_token: 't',
      run_count: 0,
      error_count: 0,
      created_at: 0,
      updated_at: 0,
    })
    .execute()
  return { store: createRunsStore(db), db }
}

describe('run writer (issue 33 item 5: a run costs one share of a transaction, not one of its own)', () => {
  it('writes the rows of runs accepted in the same moment in one transaction, and answers each once it is written', async () => {
    const batches: RunWrites[] = []
    const fake = {
      write: async (writes: RunWrites) => {
        batches.push(writes)
        return [] as RunFinish[]
      },
    } as unknown as RunsStore
    const writer = createRunWriter(fake, log, counters)
    const ids = Array.from({ length: 40 }, (_, i) => `r${i}`)
    let answered = 0
    const accepted = ids.map((id) => writer.insert(runRow(id)).then(() => answered++))
    expect(answered).toBe(0)
    await Promise.all(accepted)
    expect(batches).toHaveLength(1)
    expect(batches[0]!.inserts?.map((r) => r.id)).toEqual(ids)
  })

  it('stores a run that ended before its row was written as one ended row with its step logs', async () => {
    const { store, db } = await realStore()
    const writer = createRunWriter(store, log, counters)
    const id = newRunId(now)
    const written = Promise.all([
      writer.insert(runRow(id)),
      writer.step(stepLog(id, 0)),
      writer.step(stepLog(id, 1)),
      writer.finish(finish(id)),
    ])
    const [, , , ended] = await written
    expect(ended).toBe(true)
    const row = await db.selectFrom('flow_runs').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
    expect(row).toMatchObject({ status: 'completed', finished_at: now + 5, duration_ms: 5, started_at: now })
    expect(await store.stepLogs('p1', id)).toHaveLength(2)
    expect(await store.pendingCount('p1', 10)).toBe(0)
  })

  it('refuses the row of a run whose flow is gone without losing the others of its batch', async () => {
    const { store } = await realStore()
    const writer = createRunWriter(store, log, counters)
    const good = newRunId(now)
    const bad = newRunId(now)
    const results = await Promise.allSettled([writer.insert(runRow(good)), writer.insert(runRow(bad, 'gone'))])
    expect(results[0]!.status).toBe('fulfilled')
    expect(results[1]!.status).toBe('rejected')
    expect(await store.byId('p1', good)).toMatchObject({ id: good, status: 'running' })
    expect(await store.byId('p1', bad)).toBeUndefined()
  })
})

describe('newRunId', () => {
  it('is an id like any other (32 hex characters) that sorts by the time it was made', () => {
    const early = newRunId(now)
    const late = newRunId(now + 1)
    expect(early).toMatch(idPattern)
    expect(late).toMatch(idPattern)
    expect(early < late).toBe(true)
    expect(newRunId(now)).not.toBe(early)
  })
})

describe('chunksOf', () => {
  it.each([
    [0, []],
    [1, [1]],
    [3, [2, 1]],
    [40, [32, 8]],
    [300, [256, 32, 8, 4]],
  ])('cuts %i rows into statements of %j rows (power-of-two sizes, at most 256)', (n, sizes) => {
    const rows = Array.from({ length: n }, (_, i) => i)
    const chunks = chunksOf(rows)
    expect(chunks.map((c) => c.length)).toEqual(sizes)
    expect(chunks.flat()).toEqual(rows)
  })
})
