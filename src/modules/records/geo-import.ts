import { AppError } from '../../lib/errors.js'
import {
  readCsv,
  readGeoJson,
  readGpx,
  readKml,
  type CsvGeoOptions,
  type GeoFeature,
  type GeoFeatures,
} from '../../lib/geo/index.js'
import type { Principal } from '../../lib/principal.js'
import { fieldTypeOf, type FieldDef } from '../collections/index.js'
import { alwaysReadable } from './codec.js'
import type { Opened } from './context.js'
import { csvRecordSource } from './csv-import.js'
import type { UnknownProperties } from './import-jobs.js'
import { importLimits, type ImportSource, type SourceRow } from './import-source.js'
import type { ImportAnswer, ImportOptions, RecordImporter } from './import.js'

export const geoFormats = ['geojson', 'csv', 'kml', 'gpx'] as const
export type GeoFormat = (typeof geoFormats)[number]

/** Property → field renames; null leaves the property out without reporting it. */
export type GeoMapping = Readonly<Record<string, string | null>>

export interface GeoImportOptions extends ImportOptions {
  format: GeoFormat
  /** The geo field the geometries go to; the collection's only geo field when absent. */
  geometryField?: string
  mapping?: GeoMapping
  /** CSV only: where the geometry is, and the delimiter. */
  csv?: CsvGeoOptions
}

/** The NDJSON import's answer, with the properties each row left out (always present here). */
export type GeoImportAnswer = ImportAnswer & { unknownProperties: UnknownProperties[] }

const readers: Record<GeoFormat, (body: string, limit: number, csv: CsvGeoOptions) => GeoFeatures> = {
  geojson: (body, limit) => readGeoJson(body, limit),
  csv: (body, limit, csv) => readCsv(body, limit, csv),
  kml: (body, limit) => readKml(body, limit),
  gpx: (body, limit) => readGpx(body, limit),
}

/** The geo field the geometries go to. Throws validation_error naming the choice. */
function geometryFieldOf(opened: Opened, named: string | undefined): FieldDef {
  const geoFields = opened.shape.stored.filter((d) => fieldTypeOf(d.type).type === 'geo')
  const names = geoFields.map((d) => d.name)
  if (named !== undefined) {
    const def = geoFields.find((d) => d.name === named)
    if (!def)
      throw new AppError(
        'validation_error',
        `geometryField: "${named.slice(0, 60)}" is not a geo field of ${opened.collection.name} (its geo fields: ${names.join(', ') || 'none'})`,
        { geometryField: named.slice(0, 60), geoFields: names },
      )
    return def
  }
  if (geoFields.length === 1) return geoFields[0]!
  if (geoFields.length === 0)
    throw new AppError(
      'validation_error',
      `${opened.collection.name} has no geo field to put the geometries in: add one`,
      { geoFields: names },
    )
  throw new AppError(
    'validation_error',
    `${opened.collection.name} has several geo fields (${names.join(', ')}): name one with geometryField=`,
    { geoFields: names },
  )
}

/** Every rename must name a field other than the geometry's. Throws validation_error. */
function checkMapping(opened: Opened, mapping: GeoMapping, geometry: FieldDef): void {
  for (const [property, field] of Object.entries(mapping)) {
    if (field === null) continue
    if (field === geometry.name)
      throw new AppError(
        'validation_error',
        `mapping: "${property.slice(0, 60)}" goes to the geometry field "${field}", which takes the feature's geometry`,
        { property: property.slice(0, 60) },
      )
    if (!opened.shape.byName.has(field) && !alwaysReadable.has(field)) {
      throw new AppError(
        'validation_error',
        `mapping: "${property.slice(0, 60)}" goes to "${field.slice(0, 60)}", which is no field of ${opened.collection.name}`,
        { property: property.slice(0, 60), field: field.slice(0, 60) },
      )
    }
  }
}

const isoMoment = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$/
const truthy = new Set(['true', '1', 'yes'])
const falsy = new Set(['false', '0', 'no'])

/**
 * A text value (CSV cells, KML data, GPX tags) for the field it goes to: numbers, booleans and JSON read
 * from their text, an ISO 8601 moment with its zone as a datetime's Unix seconds; text that does not read as the field's kind is left for the field to refuse, so the
 * row's error names the field. An empty text is no value (as an export writes null). Other values as they are.
 */
function fromText(def: FieldDef | undefined, value: unknown): unknown {
  if (typeof value !== 'string') return value
  if (value === '') return undefined
  if (!def || def.translatable) return value
  const text = value.trim()
  switch (fieldTypeOf(def.type).valueKind(def)) {
    case 'integer':
    case 'number': {
      const n = text === '' ? Number.NaN : Number(text)
      if (Number.isFinite(n)) return n
      // A datetime field holds Unix seconds; GPX and KML write times as ISO 8601 (<time>, <when>).
      const ms = fieldTypeOf(def.type).type === 'datetime' && isoMoment.test(text) ? Date.parse(text) : Number.NaN
      return Number.isFinite(ms) ? Math.floor(ms / 1000) : value
    }
    case 'boolean':
      return truthy.has(text.toLowerCase()) ? true : falsy.has(text.toLowerCase()) ? false : value
    case 'json':
      try {
        return JSON.parse(text) as unknown
      } catch {
        return value
      }
    default:
      return value
  }
}

/** The rows of a geospatial body for the import's row path, and the properties each row left out. */
function sourceOf(opened: Opened, body: string, options: GeoImportOptions): ImportSource {
  // CSV of ordinary records unless the query or the collection makes it features (csv-import.ts).
  const records = options.format === 'csv' ? csvRecordSource(opened, body, options) : null
  if (records) return records
  const geometry = geometryFieldOf(opened, options.geometryField)
  const mapping = options.mapping ?? {}
  checkMapping(opened, mapping, geometry)
  const { features, truncated, textValues } = readers[options.format](body, importLimits.records, options.csv ?? {})
  const unknownProperties: UnknownProperties[] = []
  const rows = features.map((feature): SourceRow => {
    const where = { line: feature.line, ...(feature.feature === undefined ? {} : { feature: feature.feature }) }
    const { record, unknown } = recordOf(opened, feature, geometry, mapping, textValues)
    if (unknown.length > 0) unknownProperties.push({ ...where, properties: unknown })
    const { problem } = feature
    return {
      ...where,
      read: () => {
        if (problem)
          throw new AppError(
            problem.geometry ? 'invalid_field' : 'invalid_request',
            problem.message,
            problem.geometry ? { field: geometry.name } : {},
          )
        return record
      },
    }
  })
  return { rows, truncated, unknownProperties }
}

/** One feature as a create's body: its geometry in the geo field, its properties renamed; what names no field is left out. */
function recordOf(
  opened: Opened,
  feature: GeoFeature,
  geometry: FieldDef,
  mapping: GeoMapping,
  textValues: boolean,
): { record: Record<string, unknown>; unknown: string[] } {
  const record: Record<string, unknown> = {}
  const unknown: string[] = []
  for (const [property, value] of Object.entries(feature.properties)) {
    const field = Object.hasOwn(mapping, property) ? mapping[property]! : property
    if (field === null) continue
    const def = opened.shape.byName.get(field)
    // No such field, the geometry's field, or a field an earlier property of the row filled already.
    if ((!def && !alwaysReadable.has(field)) || field === geometry.name || Object.hasOwn(record, field)) {
      unknown.push(property)
      continue
    }
    const converted = textValues ? fromText(def, value) : value
    if (converted !== undefined) record[field] = converted
  }
  if (feature.geometry !== null) record[geometry.name] = feature.geometry
  return { record, unknown }
}

/**
 * The geospatial importer (core-api § Record endpoints: POST /records/import): GeoJSON, CSV, KML and GPX
 * bodies read into one record per feature and imported through the NDJSON importer's row path, so limits,
 * checks, dry runs, job attribution, events and the answer are the same.
 */
export function createGeoImporter(deps: { importer: RecordImporter }) {
  return {
    /**
     * Imports up to 1000 features as records (or, for CSV, up to 1000 rows of ordinary records: csv-import.ts). Refused features are reported per row; properties that name
     * no field are left out and listed in `unknownProperties`. Throws invalid_request (a body the format's
     * parser refuses, no feature), validation_error (no or several geo fields without geometryField, a bad
     * mapping, a CSV without the geometry column), and what the NDJSON import throws.
     */
    async run(principal: Principal, name: string, body: string, options: GeoImportOptions): Promise<GeoImportAnswer> {
      // What makes the rows: the body and every option that changes them (a job holds each chunk once).
      const identity = `geo\n${JSON.stringify([options.format, options.geometryField ?? null, options.mapping ?? null, options.csv ?? null])}\n${body}`
      const answer = await deps.importer.runSource(principal, name, identity, options, (opened) =>
        sourceOf(opened, body, options),
      )
      return { ...answer, unknownProperties: answer.unknownProperties ?? [] }
    },
  }
}

export type GeoImporter = ReturnType<typeof createGeoImporter>
