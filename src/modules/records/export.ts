import { AppError } from '../../lib/errors.js'
import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import type { Opened, Opener } from './context.js'
import type { ApiRecord } from './events.js'
import { enrich } from './expand.js'
import { present, shows, type PresentOptions } from './present.js'

export const exportLimits = {
  /** Rows read per query (by id, keyset): what sits in memory at a time. */
  batch: 500,
  /** Ids in `ids=`. */
  ids: 500,
} as const

export type ExportFormat = 'csv' | 'json'

export interface ExportQuery {
  format: ExportFormat
  /** Comma-separated ids; every record when absent. */
  ids?: string
  /** A locale for translatable fields; `*` (the default) exports each one's whole locale map. */
  locale?: string
}

/** A download: its name, its type, and its bytes as they are produced. */
export interface ExportFile {
  filename: string
  contentType: string
  body: ReadableStream<Uint8Array>
}

const idPattern = /^[A-Za-z0-9_-]{1,64}$/
// A cell a spreadsheet would take for a formula (OWASP "CSV injection"): =, +, -, @, tab, carriage return.
const formulaStart = /^[=+\-@\t\r]/

/** `a,b` → the ids, each checked. Throws invalid_request. */
function parseIds(raw: string | undefined): string[] | null {
  if (raw === undefined) return null
  const ids = [
    ...new Set(
      raw
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean),
    ),
  ]
  if (ids.length === 0) throw new AppError('invalid_request', 'ids is empty: omit it to export every record')
  if (ids.length > exportLimits.ids) throw new AppError('invalid_request', `ids takes at most ${exportLimits.ids} ids`)
  const bad = ids.find((id) => !idPattern.test(id))
  if (bad !== undefined) throw new AppError('invalid_request', `ids: "${bad.slice(0, 64)}" is not a record id`)
  return ids
}

/**
 * One CSV cell (RFC 4180): null is empty, objects and arrays are JSON text, and a text value a spreadsheet
 * would run as a formula is prefixed with `'`. Numbers and booleans are written as they are, negative
 * numbers included (they are values, not formulas).
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return ''
  let text: string
  if (typeof value === 'string') text = formulaStart.test(value) ? `'${value}` : value
  else if (typeof value === 'number' || typeof value === 'boolean') text = String(value)
  else text = JSON.stringify(value)
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** One CSV record, CRLF-terminated. */
export function csvLine(cells: readonly unknown[]): string {
  let line = ''
  for (let i = 0; i < cells.length; i++) line += (i === 0 ? '' : ',') + csvCell(cells[i])
  return `${line}\r\n`
}

/** The columns a list would answer to this caller: system columns, then readable stored and computed fields. */
function columnsOf(opened: Opened, view: PresentOptions): string[] {
  const system = [
    'id',
    'created_at',
    'updated_at',
    'created_by',
    'updated_by',
    'deleted_at',
    '_version',
    ...(opened.collection.ownerScoped ? ['owned_by'] : []),
  ]
  return [...system, ...[...opened.shape.stored, ...opened.shape.computed].map((f) => f.name)].filter((name) =>
    shows(name, view),
  )
}

/**
 * Exports (core-api § Record endpoints, Export): what a list would show the caller — its row scope, its
 * column allowlist, soft-deleted records left out — as CSV or a JSON array, streamed. Rows are read in
 * batches by id (keyset) as the client takes them, so the export's memory does not grow with the table.
 */
export function createRecordExporter(deps: { open: Opener; log: Logger }) {
  return {
    /** Opens the export and reads its first batch. Throws invalid_request, collection_not_found, forbidden, unauthorized. */
    async run(principal: Principal, name: string, query: ExportQuery): Promise<ExportFile> {
      const opened = await deps.open(principal, name, 'read', query.locale ?? '*')
      const ids = parseIds(query.ids)
      const view: PresentOptions = { locale: opened.locale, projection: null, allowlist: opened.scope.fields }
      const columns = columnsOf(opened, view)
      const conditions = opened.store.where(opened.scope.rows, false)
      let after: string | null = null
      let finished = false

      async function nextBatch(): Promise<ApiRecord[]> {
        if (finished) return []
        let select = opened.store.selectFrom().selectAll()
        for (const condition of conditions) select = select.where(condition)
        if (ids) select = select.where('id', 'in', ids)
        if (after !== null) select = select.where('id', '>', after)
        const rows = await select.orderBy('id').limit(exportLimits.batch).execute()
        if (rows.length < exportLimits.batch) finished = true
        if (rows.length === 0) return []
        after = String(rows[rows.length - 1]!.id)
        const records = rows.map((row) => present(opened.shape, row, view))
        if (opened.shape.computed.length > 0) await enrich(deps.open, opened, rows, records, [], { projection: null })
        return records
      }

      const render =
        query.format === 'csv'
          ? (records: ApiRecord[], _first: boolean) => records.map((r) => csvLine(columns.map((c) => r[c]))).join('')
          : (records: ApiRecord[], first: boolean) =>
              (first ? '\n' : ',\n') + records.map((r) => JSON.stringify(r)).join(',\n')
      const encoder = new TextEncoder()
      // The first batch is read before answering, so a failure there is an ordinary error response.
      let pending: ApiRecord[] | null = await nextBatch()
      let first = true
      let cancelled = false
      const body = new ReadableStream<Uint8Array>(
        {
          start(controller) {
            controller.enqueue(encoder.encode(query.format === 'csv' ? csvLine(columns) : '['))
          },
          async pull(controller) {
            try {
              const records = pending ?? (await nextBatch())
              pending = null
              if (cancelled) return
              if (records.length === 0) {
                if (query.format === 'json') controller.enqueue(encoder.encode(first ? ']' : '\n]'))
                controller.close()
                return
              }
              controller.enqueue(encoder.encode(render(records, first)))
              first = false
            } catch (err) {
              // The client hung up while a batch was being read: nothing is owed to anyone.
              if (cancelled) return
              // Headers are gone: all that is left is to cut the download short (the client sees it end early).
              deps.log.error({ err, collection: name }, 'export failed mid-stream')
              controller.error(err)
            }
          },
          cancel() {
            cancelled = true
            finished = true
          },
        },
        { highWaterMark: 1 },
      )
      return {
        filename: `${opened.collection.name}-export.${query.format}`,
        contentType: query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
        body,
      }
    },
  }
}

export type RecordExporter = ReturnType<typeof createRecordExporter>
