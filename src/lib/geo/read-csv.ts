import { CsvError, parse } from 'csv-parse/sync'
import { wktToGeoJSON } from '@terraformer/wkt'
import { AppError } from '../errors.js'
import type { GeoFeature, GeoFeatures } from './features.js'

/** Where a CSV body's geometry is: a WKT column, or a latitude and a longitude column; the delimiter. */
export interface CsvGeoOptions {
  wkt?: string
  lat?: string
  lon?: string
  /** One character; guessed from the header row when absent. */
  delimiter?: string
}

/** The column names looked for when none is named (case-insensitive), in order of preference. */
export const csvGeoDefaults = {
  wkt: ['wkt', 'geometry'],
  lat: ['lat', 'latitude'],
  lon: ['lon', 'lng', 'longitude'],
} as const

/** Delimiters a header row is tried with; the one that splits it into the most columns wins (ties: the first). */
const candidates = [',', ';', '\t', '|']

type Geometry = { kind: 'wkt'; column: number } | { kind: 'latlon'; lat: number; lon: number }

/**
 * A CSV body (RFC 4180, through csv-parse): a header row, then one feature per record, its geometry from
 * a WKT column or a lat/lon pair, every other column a property (text). A record whose geometry cannot be
 * read, or whose number of values differs from the header's, carries its problem. Throws invalid_request
 * (not CSV, no header, a header naming a column twice, wkt= with lat=/lon=), validation_error (no
 * geometry column, or a named one missing: the header's columns are listed).
 */
export function readCsv(body: string, limit: number, options: CsvGeoOptions): GeoFeatures {
  if (options.wkt !== undefined && (options.lat !== undefined || options.lon !== undefined)) {
    throw new AppError('invalid_request', 'Name either a wkt column or lat and lon columns, not both')
  }
  const delimiter = options.delimiter ?? guessDelimiter(body)
  let records: { record: string[]; info: { lines: number } }[]
  try {
    records = parse(body, {
      bom: true,
      delimiter,
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
    }) as never
  } catch (err) {
    if (err instanceof CsvError) throw new AppError('invalid_request', `The body is not readable CSV: ${err.message}`)
    throw err
  }
  const [head, ...rest] = records
  if (!head) throw new AppError('invalid_request', 'The CSV body is empty: send a header row, then one row per feature')
  // Header names are trimmed ("name, lat, lon" names name, lat and lon); values are kept as they are.
  const header = head.record.map((name) => name.trim())
  const twice = header.find((name, i) => header.indexOf(name) !== i)
  if (twice !== undefined)
    throw new AppError('invalid_request', `The header names the column "${twice.slice(0, 60)}" twice`)
  const geometry = geometryColumns(header, options)
  const used = new Set(geometry.kind === 'wkt' ? [geometry.column] : [geometry.lat, geometry.lon])
  const truncated = rest.length > limit
  const features = rest.slice(0, limit).map(({ record, info }): GeoFeature => {
    const line = info.lines
    if (record.length !== header.length)
      return {
        line,
        geometry: null,
        properties: {},
        problem: { message: `The row has ${record.length} values, the header ${header.length}`, geometry: false },
      }
    const properties: Record<string, unknown> = {}
    header.forEach((name, i) => {
      if (!used.has(i)) properties[name] = record[i]
    })
    try {
      return { line, geometry: geometryOf(record, header, geometry), properties }
    } catch (err) {
      return {
        line,
        geometry: null,
        properties: {},
        problem: { message: err instanceof Error ? err.message : String(err), geometry: true },
      }
    }
  })
  return { features, truncated, textValues: true }
}

/** The candidate that splits the header row into the most columns (the header row alone is parsed with each). */
export function guessDelimiter(body: string): string {
  let best = { delimiter: ',', columns: 0 }
  for (const delimiter of candidates) {
    try {
      const [header] = parse(body, { bom: true, delimiter, to_line: 1, relax_column_count: true }) as string[][]
      if (header && header.length > best.columns) best = { delimiter, columns: header.length }
    } catch {
      // A header this delimiter cannot parse: not this one.
    }
  }
  return best.delimiter
}

function geometryColumns(header: readonly string[], options: CsvGeoOptions): Geometry {
  const named = (name: string, option: string): number => {
    const index = header.indexOf(name)
    if (index === -1)
      throw new AppError('validation_error', `No column "${name.slice(0, 60)}" (${option}=) in the header`, {
        option,
        columns: header.slice(0, 100),
      })
    return index
  }
  const found = (names: readonly string[]): number => {
    const lower = header.map((h) => h.toLowerCase())
    for (const name of names) {
      const index = lower.indexOf(name)
      if (index !== -1) return index
    }
    return -1
  }
  if (options.wkt !== undefined) return { kind: 'wkt', column: named(options.wkt, 'wkt') }
  if (options.lat === undefined && options.lon === undefined) {
    const wkt = found(csvGeoDefaults.wkt)
    if (wkt !== -1) return { kind: 'wkt', column: wkt }
  }
  const lat = options.lat === undefined ? found(csvGeoDefaults.lat) : named(options.lat, 'lat')
  const lon = options.lon === undefined ? found(csvGeoDefaults.lon) : named(options.lon, 'lon')
  if (lat === -1 || lon === -1) {
    throw new AppError(
      'validation_error',
      'No geometry column: name a WKT column with wkt=, or the coordinate columns with lat= and lon= (looked for wkt or geometry, and lat/latitude with lon/lng/longitude)',
      { columns: header.slice(0, 100) },
    )
  }
  return { kind: 'latlon', lat, lon }
}

/** The row's geometry, or null when its geometry cells are empty; throws an Error naming what is wrong. */
function geometryOf(record: readonly string[], header: readonly string[], geometry: Geometry): unknown {
  if (geometry.kind === 'wkt') {
    const text = record[geometry.column]!.trim()
    if (text === '') return null
    try {
      return wktToGeoJSON(text)
    } catch {
      throw new Error(`"${header[geometry.column]}" is not WKT`)
    }
  }
  const lat = record[geometry.lat]!.trim()
  const lon = record[geometry.lon]!.trim()
  if (lat === '' && lon === '') return null
  return {
    type: 'Point',
    coordinates: [coordinate(lon, header[geometry.lon]!), coordinate(lat, header[geometry.lat]!)],
  }
}

function coordinate(text: string, column: string): number {
  const value = text === '' ? Number.NaN : Number(text)
  if (!Number.isFinite(value)) throw new Error(`"${column}" is not a number`)
  return value
}
