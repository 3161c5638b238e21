// Import (NDJSON, CSV, GeoJSON) through an import job with its progress, and export as a download.
import type { ImportJob } from '@plinth/client'
import { useRef, useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../../api.js'
import { ProblemNote } from '../form.js'

const chunkRows = 500

type Format = 'ndjson' | 'csv' | 'geojson'

function formatOf(name: string): Format | null {
  const lower = name.toLowerCase()
  if (lower.endsWith('.ndjson') || lower.endsWith('.jsonl')) return 'ndjson'
  if (lower.endsWith('.csv') || lower.endsWith('.tsv')) return 'csv'
  if (lower.endsWith('.geojson') || lower.endsWith('.json')) return 'geojson'
  return null
}

/** The rows of a CSV text (quoted cells may hold line breaks), each with its line ending. */
function csvRows(text: string): string[] {
  const rows: string[] = []
  let quoted = false
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]
    if (ch === '"') quoted = !quoted
    else if (ch === '\n' && !quoted) {
      rows.push(text.slice(start, i + 1))
      start = i + 1
    }
  }
  if (start < text.length) rows.push(text.slice(start))
  return rows.filter((r) => r.trim() !== '')
}

/** The records of an NDJSON text; a line that is not a JSON object is named, and nothing is sent. */
function parseLines(text: string): Record<string, unknown>[] {
  const records: Record<string, unknown>[] = []
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      throw new Error(`Line ${i + 1} is not JSON.`)
    }
    if (!value || typeof value !== 'object' || Array.isArray(value))
      throw new Error(`Line ${i + 1} is not a JSON object.`)
    records.push(value as Record<string, unknown>)
  })
  return records
}

/** The file cut into request bodies of at most `chunkRows` records, with the count of records. */
function chunksOf(format: 'csv' | 'geojson', text: string): { bodies: string[]; total: number; type: string } {
  if (format === 'csv') {
    const [header, ...rows] = csvRows(text.replace(/^\uFEFF/, ''))
    if (header === undefined) throw new Error('The file is empty.')
    const bodies: string[] = []
    const head = header.endsWith('\n') ? header : `${header}\n`
    for (let i = 0; i < rows.length; i += chunkRows) bodies.push(head + rows.slice(i, i + chunkRows).join(''))
    return { bodies, total: rows.length, type: 'text/csv' }
  }
  const parsed = JSON.parse(text) as { type?: string; features?: unknown[] }
  const features = parsed.type === 'FeatureCollection' ? (parsed.features ?? []) : [parsed]
  const bodies: string[] = []
  for (let i = 0; i < features.length; i += chunkRows)
    bodies.push(JSON.stringify({ type: 'FeatureCollection', features: features.slice(i, i + chunkRows) }))
  return { bodies, total: features.length, type: 'application/geo+json' }
}

export function ImportPanel(props: { collection: string; onDone: () => void }) {
  const [job, setJob] = useState<ImportJob | null>(null)
  const [running, setRunning] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)
  const input = useRef<HTMLInputElement>(null)

  const run = async () => {
    const file = input.current?.files?.[0]
    if (!file) return setProblem({ message: 'Choose a file first.', code: 'client', status: null })
    const format = formatOf(file.name)
    if (!format)
      return setProblem({ message: 'Choose an .ndjson, .csv or .geojson file.', code: 'client', status: null })
    setProblem(null)
    setRunning(true)
    setJob(null)
    try {
      const text = await file.text()
      if (format === 'ndjson') {
        // Through the SDK's import job (records-exchange): chunks sent, the job polled after each.
        const records = parseLines(text)
        const finished = await client.collection(props.collection).importRecords(records, {
          chunkSize: chunkRows,
          total: records.length,
          onProgress: setJob,
        })
        setJob(finished)
        props.onDone()
        return
      }
      const { bodies, total, type } = chunksOf(format, text)
      const base = `/api/v1/collections/${encodeURIComponent(props.collection)}/records`
      const t = client.transport
      const started = await t.request<ImportJob>('POST', `${base}/import-jobs`, { body: { total } })
      setJob(started)
      const jobPath = `${base}/import-jobs/${encodeURIComponent(started.jobId)}`
      for (const body of bodies) {
        await t.request('POST', `${base}/import`, {
          body,
          headers: { 'content-type': type },
          query: { jobId: started.jobId },
        })
        setJob(await t.request<ImportJob>('GET', jobPath))
      }
      setJob(await t.request<ImportJob>('POST', `${jobPath}/finalize`))
      props.onDone()
    } catch (err) {
      setProblem(problemOf(err))
    } finally {
      setRunning(false)
    }
  }

  const done = job ? job.imported + job.failed : 0
  return (
    <section class="card exchange" aria-labelledby="import-title">
      <h2 id="import-title">Import</h2>
      <div class="inline">
        <div class="field">
          <label for="import-file">File (.ndjson, .csv or .geojson)</label>
          <input id="import-file" ref={input} type="file" accept=".ndjson,.jsonl,.csv,.tsv,.geojson,.json" />
        </div>
        <button type="button" class="button button-primary" disabled={running} onClick={() => void run()}>
          Import the file
        </button>
      </div>
      <ProblemNote problem={problem} />
      {job ? (
        <div class="import-progress">
          <label for="import-bar">
            {job.status === 'complete' ? 'Import complete' : 'Importing'}: {done} of {job.total}
          </label>
          <progress id="import-bar" max={Math.max(job.total, 1)} value={done} />
          <p role="status">
            {job.imported} imported, {job.failed} failed{job.status === 'complete' ? ', done.' : '…'}
          </p>
          {job.errors.length > 0 ? (
            <ul class="import-errors">
              {job.errors.slice(0, 10).map((e, i) => (
                <li key={i}>
                  Line {e.line}
                  {e.field ? ` (${e.field})` : ''}: {e.message}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </section>
  )
}

export function ExportButtons(props: { collection: string }) {
  const [busy, setBusy] = useState<string | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  const download = async (format: 'csv' | 'json') => {
    setBusy(format)
    setProblem(null)
    try {
      const stream = await client.collection(props.collection).exportStream(format)
      const blob = await new Response(stream).blob()
      const url = URL.createObjectURL(blob)
      const a = document.createElement('a')
      a.href = url
      a.download = `${props.collection}-export.${format}`
      document.body.append(a)
      a.click()
      a.remove()
      setTimeout(() => URL.revokeObjectURL(url), 10_000)
    } catch (err) {
      setProblem(problemOf(err))
    } finally {
      setBusy(null)
    }
  }
  return (
    <>
      <button type="button" class="button" disabled={busy !== null} onClick={() => void download('csv')}>
        {busy === 'csv' ? 'Exporting…' : 'Export CSV'}
      </button>
      <button type="button" class="button" disabled={busy !== null} onClick={() => void download('json')}>
        {busy === 'json' ? 'Exporting…' : 'Export JSON'}
      </button>
      <ProblemNote problem={problem} />
    </>
  )
}
