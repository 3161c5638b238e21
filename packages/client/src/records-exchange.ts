// Export and import of a collection's records with progress (docs/import-export.md).
import type { components } from './generated/openapi.js'
import type { RecordOf } from './filter.js'
import type { RecordInput } from './records.js'
import type { Transport } from './transport.js'
import { createRowCounter } from './row-counter.js'

export type ImportJob = components['schemas']['ImportJob']

export interface ExportProgress {
  /** Bytes of the file received so far. */
  bytes: number
  /** Records received so far (CSV rows after the header, or objects of the JSON array). */
  rows: number
}

export interface ExportOptions {
  /** Only these records (at most 500); every record the caller may read by default. */
  ids?: readonly string[]
  /** One locale for translatable fields; their whole locale map by default. */
  locale?: string
  /** Told as the file streams in. */
  onProgress?: (progress: ExportProgress) => void
  signal?: AbortSignal
}

export interface ImportOptions {
  /** Records per request (one NDJSON chunk each); 500 by default. */
  chunkSize?: number
  /** What the job reports as its total; the number of records when an array is given. */
  total?: number
  /** Told after each chunk with the job as the server holds it (polled: GET …/import-jobs/:jobId). */
  onProgress?: (job: ImportJob) => void
  /** Start the rebuild of the search indexes drawing from the collection when done. */
  rebuildSearchIndexes?: boolean
  signal?: AbortSignal
}

export interface RecordExchange<R> {
  /** The export as a stream of bytes (CSV or JSON), counting bytes and records as they pass. */
  exportStream(format: 'csv' | 'json', options?: ExportOptions): Promise<ReadableStream<Uint8Array>>
  /** The whole export: CSV text, or the records of a JSON export. */
  exportCsv(options?: ExportOptions): Promise<string>
  exportJson(options?: ExportOptions): Promise<RecordOf<R>[]>
  /**
   * Imports records through an import job: chunks of NDJSON, the job polled after each for `onProgress`, then
   * finalized. Lines that fail are counted in `failed` and sampled in `errors`; they do not stop the others.
   */
  importRecords(
    records: Iterable<RecordInput<R>> | AsyncIterable<RecordInput<R>>,
    options?: ImportOptions,
  ): Promise<ImportJob>
}

async function* chunksOf<T>(source: Iterable<T> | AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let chunk: T[] = []
  for await (const item of source) {
    chunk.push(item)
    if (chunk.length >= size) {
      yield chunk
      chunk = []
    }
  }
  if (chunk.length > 0) yield chunk
}

export function createRecordExchange<R>(transport: Transport, base: string): RecordExchange<R> {
  async function exportStream(format: 'csv' | 'json', options: ExportOptions = {}) {
    const res = await transport.request<Response>('GET', `${base}/export`, {
      as: 'response',
      query: { format, ids: options.ids?.join(','), locale: options.locale },
      signal: options.signal,
    })
    if (!res.body) return new ReadableStream<Uint8Array>({ start: (controller) => controller.close() })
    const counter = createRowCounter(format)
    const progress: ExportProgress = { bytes: 0, rows: 0 }
    return res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          progress.bytes += chunk.byteLength
          progress.rows = counter.push(chunk)
          options.onProgress?.({ ...progress })
          controller.enqueue(chunk)
        },
      }),
    )
  }
  const exportText = async (format: 'csv' | 'json', options?: ExportOptions) =>
    new Response(await exportStream(format, options)).text()
  return {
    exportStream,
    exportCsv: (options) => exportText('csv', options),
    exportJson: async (options) => JSON.parse(await exportText('json', options)) as RecordOf<R>[],
    async importRecords(records, options = {}) {
      const jobs = `${base}/import-jobs`
      const total = options.total ?? (Array.isArray(records) ? records.length : 0)
      const job = await transport.request<ImportJob>('POST', jobs, { body: { total }, signal: options.signal })
      const jobPath = `${jobs}/${encodeURIComponent(job.jobId)}`
      for await (const chunk of chunksOf(records, options.chunkSize ?? 500)) {
        await transport.request('POST', `${base}/import-ndjson`, {
          body: chunk.map((record) => JSON.stringify(record)).join('\n'),
          headers: { 'content-type': 'application/x-ndjson' },
          query: { jobId: job.jobId },
          signal: options.signal,
        })
        if (options.onProgress)
          options.onProgress(await transport.request<ImportJob>('GET', jobPath, { signal: options.signal }))
      }
      return transport.request<ImportJob>('POST', `${jobPath}/finalize`, {
        query: { rebuild: options.rebuildSearchIndexes },
        signal: options.signal,
      })
    },
  }
}
