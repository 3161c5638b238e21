import { createClient, type ExportProgress, type ImportJob, type PlinthClient } from '@plinth/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { ticketsDefinition, type Collections } from './collections.fixture.js'

// Export and import through the SDK with progress: an import job fed in chunks and polled after each, an export
// streamed with bytes and rows counted. Runs on SQLite, and on PostgreSQL with TEST_DATABASE_URL set.

let server: TestServer
let client: PlinthClient<Collections>
beforeAll(async () => {
  server = await startServer()
  client = createClient<Collections>({ url: server.url })
  await client.auth.signUp({ email: 'owner@example.com', password: 'owner password', name: 'Owner' })
  await client.transport.request('POST', '/api/v1/collections', { body: ticketsDefinition })
})
afterAll(async () => {
  await server?.stop()
})

describe('importRecords', () => {
  it('sends chunks to an import job, reports the job after each, and finalizes it', async () => {
    const tickets = client.collection('tickets')
    // A generator: the SDK does not need the records in memory; the total is given for the job's reporting.
    function* rows() {
      for (let i = 1; i <= 25; i++) yield i === 13 ? { priority: i } : { title: `Imported ${i}`, priority: i }
    }
    const seen: ImportJob[] = []
    const job = await tickets.importRecords(rows(), { chunkSize: 10, total: 25, onProgress: (j) => seen.push(j) })
    expect(seen.map((j) => [j.chunks, j.imported + j.failed])).toEqual([
      [1, 10],
      [2, 20],
      [3, 25],
    ])
    expect(seen.every((j) => j.status === 'pending' && j.total === 25)).toBe(true)
    expect(job).toMatchObject({ status: 'complete', imported: 24, failed: 1, chunks: 3, total: 25 })
    expect(job.errors).toEqual([expect.objectContaining({ chunk: 2, line: 3, code: 'missing_field' })])
    expect((await tickets.list({ filter: { title: { _starts_with: 'Imported ' } } })).total).toBe(24)
  })
})

describe('exportCsv, exportJson, exportStream', () => {
  it('reports bytes and rows as the file streams, and answers the whole file', async () => {
    const tickets = client.collection('tickets')
    const total = (await tickets.list({ limit: 1 })).total
    expect(total).toBeGreaterThan(0)
    const csvProgress: ExportProgress[] = []
    const csv = await tickets.exportCsv({ onProgress: (p) => csvProgress.push(p) })
    const lines = csv.trimEnd().split('\r\n')
    expect(lines[0]!.startsWith('id,created_at,updated_at')).toBe(true)
    expect(lines).toHaveLength(total + 1)
    expect(csvProgress.at(-1)).toEqual({ bytes: new TextEncoder().encode(csv).byteLength, rows: total })

    const jsonProgress: ExportProgress[] = []
    const records = await tickets.exportJson({ onProgress: (p) => jsonProgress.push(p) })
    expect(records).toHaveLength(total)
    expect(records[0]).toMatchObject({ id: expect.any(String), title: expect.any(String) })
    expect(jsonProgress.at(-1)?.rows).toBe(total)
  })

  it('exports only the ids asked for, as a stream', async () => {
    const tickets = client.collection('tickets')
    const [a, b] = (await tickets.list({ limit: 2, sortBy: 'priority' })).data
    const stream = await tickets.exportStream('json', { ids: [a!.id, b!.id] })
    const text = await new Response(stream).text()
    expect((JSON.parse(text) as { id: string }[]).map((r) => r.id).sort()).toEqual([a!.id, b!.id].sort())
  })
})
