import { CsvError, parse } from 'csv-parse/sync'
import { AppError } from '../../lib/errors.js'
import { guessDelimiter } from '../../lib/geo/index.js'
import { fieldTypeOf, type FieldDef } from '../collections/index.js'
import { alwaysReadable, jsonValueBytesLimit } from './codec.js'
import type { Opened } from './context.js'
import { cellValue, systemValue, unguard } from './csv-values.js'
import { importLimits, type ImportSource, type SourceRow } from './import-source.js'

// CSV of ordinary records (issue 31): a header row naming fields, then one record per row, read into the
// same rows the NDJSON import checks and stores (import.ts, runSource). The import route takes CSV for
// geospatial features too (geo-import.ts); `csvRecordSource` says which reading a body gets.

export const csvImportLimits = {
  /** Characters in one row (all its cells): any value a field may hold fits, a runaway row does not. */
  rowChars: jsonValueBytesLimit,
} as const

/** What the import route's query says about a CSV body. */
export interface CsvRecordOptions {
  geometryField?: string | undefined
  mapping?: Readonly<Record<string, string | null>> | undefined
  csv?: { wkt?: string; lat?: string; lon?: string; delimiter?: string } | undefined
}

/** Where a column goes: a field, a system column a create may set, or nowhere (left out). */
type Column = { kind: 'field'; def: FieldDef } | { kind: 'system'; name: string } | { kind: 'none' }

type Parsed = { record: string[]; info: { bytes: number } }
const settable = new Set(['id', 'created_at', 'updated_at'])
const isGeo = (def: FieldDef) => fieldTypeOf(def.type).type === 'geo'

/**
 * A CSV body as records, or null when it is to be read as geospatial features: the query names a
 * geometry (geometryField, wkt, lat, lon), or the collection has a geo field and no column names one (an
 * export writes each geo field as its own column of GeoJSON text). Throws invalid_request (not CSV, a row
 * over the limit, a column named twice, no header), validation_error (a mapping to no field).
 */
export function csvRecordSource(opened: Opened, body: string, options: CsvRecordOptions): ImportSource | null {
  const { csv = {}, mapping = {} } = options
  if (options.geometryField !== undefined || csv.wkt !== undefined || csv.lat !== undefined || csv.lon !== undefined)
    return null
  const delimiter = csv.delimiter ?? guessDelimiter(body)
  const [head] = parseCsv(body, delimiter, 1)
  if (!head) throw new AppError('invalid_request', 'The CSV body is empty: send a header row, then one row per record')
  // Header names are trimmed ("title, count" names title and count); cells are kept as they are.
  const header = head.record.map((name) => name.trim())
  const twice = header.find((name, i) => header.indexOf(name) !== i)
  if (twice !== undefined)
    throw new AppError('invalid_request', `The header names the column "${twice.slice(0, 60)}" twice`)
  const targets = header.map((name) => (Object.hasOwn(mapping, name) ? mapping[name]! : name))
  const geoFields = opened.shape.stored.filter(isGeo)
  if (geoFields.length > 0 && !targets.some((t) => t !== null && geoFields.some((d) => d.name === t))) return null
  checkMapping(opened, mapping)

  const unknown: string[] = []
  const taken = new Set<string>()
  const columns = header.map((name, i): Column => {
    const target = targets[i]!
    if (target === null) return { kind: 'none' }
    const def = opened.shape.byName.get(target)
    // A column naming no field, a computed one (the export writes them), or a field a column before it took.
    if ((!def && !alwaysReadable.has(target)) || (def && fieldTypeOf(def.type).computed) || taken.has(target)) {
      unknown.push(name)
      return { kind: 'none' }
    }
    taken.add(target)
    if (def) return { kind: 'field', def }
    // created_by, updated_by, deleted_at, _version, owned_by: ignored, as import-ndjson ignores them.
    return settable.has(target) ? { kind: 'system', name: target } : { kind: 'none' }
  })

  const parsed = parseCsv(body, delimiter, importLimits.records + 2)
  const lines = lineCounter(body)
  lines.startOf(parsed[0]!)
  const rows = parsed.slice(1, importLimits.records + 1).map((entry): SourceRow => {
    const line = lines.startOf(entry)
    return { line, read: () => recordOf(entry.record, columns) }
  })
  return {
    rows,
    truncated: parsed.length > importLimits.records + 1,
    unknownProperties: unknown.length > 0 ? [{ line: 1, properties: unknown }] : [],
  }
}

/** One row as a create's body. Throws invalid_request (a row whose values do not match the header), invalid_field. */
function recordOf(record: readonly string[], columns: readonly Column[]): Record<string, unknown> {
  if (record.length !== columns.length)
    throw new AppError('invalid_request', `The row has ${record.length} values, the header ${columns.length}`)
  const body: Record<string, unknown> = {}
  columns.forEach((column, i) => {
    if (column.kind === 'none') return
    const cell = unguard(record[i]!)
    if (column.kind === 'field') body[column.def.name] = cellValue(column.def, cell)
    else {
      const value = systemValue(column.name, cell)
      if (value !== undefined) body[column.name] = value
    }
  })
  return body
}

/** A rename must name a field (or a system column). Throws validation_error. */
function checkMapping(opened: Opened, mapping: Readonly<Record<string, string | null>>): void {
  for (const [column, field] of Object.entries(mapping)) {
    if (field === null || opened.shape.byName.has(field) || alwaysReadable.has(field)) continue
    throw new AppError(
      'validation_error',
      `mapping: "${column.slice(0, 60)}" goes to "${field.slice(0, 60)}", which is no field of ${opened.collection.name}`,
      { property: column.slice(0, 60), field: field.slice(0, 60) },
    )
  }
}

/** The first `records` records of the body (RFC 4180 through csv-parse). Throws invalid_request. */
function parseCsv(body: string, delimiter: string, records: number): Parsed[] {
  try {
    return parse(body, {
      bom: true,
      delimiter,
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
      max_record_size: csvImportLimits.rowChars,
      to: records,
    }) as never
  } catch (err) {
    if (!(err instanceof CsvError)) throw err
    if (err.code === 'CSV_MAX_RECORD_SIZE')
      throw new AppError(
        'invalid_request',
        `A row near line ${String(err.lines)} is longer than ${csvImportLimits.rowChars} characters: send values that large as NDJSON, or check for an unclosed quote`,
        { limit: csvImportLimits.rowChars },
      )
    throw new AppError('invalid_request', `The body is not readable CSV: ${err.message}`)
  }
}

/**
 * The line each record starts on, as an editor numbers them (the header is line 1; blank lines and line
 * breaks inside quoted cells count). csv-parse counts a CRLF inside a quoted cell as two lines, so lines
 * are counted here, from the byte offset where csv-parse says each record ends.
 */
function lineCounter(body: string) {
  const bytes = Buffer.from(body, 'utf8')
  let at = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
  let line = 1
  const isBreak = (b: number | undefined) => b === 0x0a || b === 0x0d
  const step = () => {
    // CRLF is one line break; so is a lone LF or CR.
    at += bytes[at] === 0x0d && bytes[at + 1] === 0x0a ? 2 : 1
    line++
  }
  return {
    startOf(entry: Parsed): number {
      while (at < entry.info.bytes && isBreak(bytes[at])) step()
      const start = line
      while (at < entry.info.bytes) {
        if (isBreak(bytes[at])) step()
        else at++
      }
      return start
    },
  }
}
