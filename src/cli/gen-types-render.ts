import {
  expandType,
  fieldNote,
  literal,
  propertyName,
  shared,
  valueType,
  type MapContext,
  type WireCollection,
} from './gen-types-fields.js'

/**
 * The TypeScript module `plinth types` writes (docs/cli.md#types). Its contract with @plinth/client: one
 * `export interface <Name>` per collection, `export interface Collections { <collection>: <Name> }` for
 * `createClient<Collections>()`, and `CollectionExpands` / `Expanded<C, K>` for `expand=`. The output holds
 * no timestamp, so regenerating an unchanged schema gives the same file (a CI check can diff it).
 */

/** Names the output declares itself, and global types a collection's interface must not shadow. */
const reserved = new Set([
  'Collections',
  'CollectionExpands',
  'Expanded',
  ...Object.values(shared),
  'PlinthSimpleGeometry',
  'Array',
  'Boolean',
  'Date',
  'Error',
  'Function',
  'Map',
  'Number',
  'Object',
  'Omit',
  'Partial',
  'Pick',
  'Promise',
  'Readonly',
  'Record',
  'Required',
  'Set',
  'String',
  'Symbol',
  'Exclude',
  'Extract',
  'NonNullable',
])

/** `help_desk_tickets` → `HelpDeskTickets`: the collection's name, PascalCase, not made singular (a guess would misname `news`). */
export function pascalName(name: string): string {
  const pascal = name
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== '')
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('')
  return /^[A-Za-z_$]/.test(pascal) ? pascal : `C${pascal}`
}

/**
 * The interface names of the collections (record and expand), in the collections' order: PascalCase, with
 * `Record` appended where that is a reserved or global name, then a number where two would still meet.
 */
export function interfaceNames(names: readonly string[]): Map<string, { record: string; expand: string }> {
  const used = new Set(reserved)
  const claim = (wanted: string): string => {
    let name = wanted
    for (let n = 2; used.has(name); n++) name = `${wanted}${n}`
    used.add(name)
    return name
  }
  const result = new Map<string, { record: string; expand: string }>()
  for (const collection of names) {
    const base = pascalName(collection)
    const record = claim(reserved.has(base) ? `${base}Record` : base)
    result.set(collection, { record, expand: '' })
  }
  // Expand names after every record name, so a collection called `x_expand` keeps its own name.
  for (const entry of result.values()) entry.expand = claim(`${entry.record}Expand`)
  return result
}

const preamble = `/** Any JSON value: a json field without a strict structure. */
export type ${shared.json} = string | number | boolean | null | ${shared.json}[] | { [key: string]: ${shared.json} }

/** A GeoJSON geometry other than a collection (RFC 7946); positions are [longitude, latitude, altitude?]. */
export type PlinthSimpleGeometry =
  | { type: "Point"; coordinates: number[]; bbox?: number[] }
  | { type: "MultiPoint"; coordinates: number[][]; bbox?: number[] }
  | { type: "LineString"; coordinates: number[][]; bbox?: number[] }
  | { type: "MultiLineString"; coordinates: number[][][]; bbox?: number[] }
  | { type: "Polygon"; coordinates: number[][][]; bbox?: number[] }
  | { type: "MultiPolygon"; coordinates: number[][][][]; bbox?: number[] }

/** A geo field's value: a GeoJSON geometry (a GeometryCollection holds no other collection). */
export type ${shared.geometry} =
  | PlinthSimpleGeometry
  | { type: "GeometryCollection"; geometries: PlinthSimpleGeometry[]; bbox?: number[] }

/** An expanded relation to users: the public profile (email only for a caller holding system/users:read). */
export interface ${shared.profile} {
  id: string
  name: string
  email?: string | null
}

/** The system columns every record carries (docs/collections.md#system-columns). */
export interface ${shared.record} {
  /** 32 hex characters unless an administrator set it */
  id: string
  /** Unix seconds */
  created_at: number
  /** Unix seconds */
  updated_at: number
  created_by: string | null
  updated_by: string | null
  /** Unix seconds; null while the record is active */
  deleted_at: number | null
  /** 1 on create, +1 on every write: the update precondition */
  _version: number
  /** present once the collection uses owner scoping or had a record transferred */
  owned_by?: string | null
}

/** A record of a collection these types do not describe (a relation's target left out with --collections). */
export interface ${shared.anyRecord} extends ${shared.record} {
  [field: string]: unknown
}
`

/** What the header names: where the schema came from. */
export interface RenderOptions {
  source: string
}

/** The whole module for these collections (sorted by name); `all` is every collection of the project, for lookups. */
export function renderTypes(
  selected: readonly WireCollection[],
  all: readonly WireCollection[],
  options: RenderOptions,
): string {
  const collections = [...selected].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const names = interfaceNames(collections.map((c) => c.name))
  const ctx: MapContext = {
    collections: new Map(all.map((c) => [c.name, c])),
    interfaceOf: (name) => names.get(name)?.record,
  }
  const out: string[] = [
    `// Generated by \`plinth types\` from ${options.source}. Do not edit: run it again after a schema change.`,
    '',
    preamble,
  ]
  for (const collection of collections) {
    const { record, expand } = names.get(collection.name)!
    const version = collection.schemaVersion === undefined ? '' : ` (schema version ${collection.schemaVersion})`
    out.push(`/** A record of \`${collection.name}\`${version}, as the API answers it. */`)
    out.push(`export interface ${record} extends ${shared.record} {`)
    for (const field of collection.fields) {
      out.push(`  /** ${fieldNote(field).replace(/\*\//g, '*\\/')}${field.required ? ', required' : ''} */`)
      out.push(`  ${propertyName(field.name)}: ${valueType(field, collection, ctx)}`)
    }
    out.push('}', '')
    const relations = collection.fields.flatMap((field) => {
      const type = expandType(field, ctx)
      return type === undefined ? [] : [`  ${propertyName(field.name)}: ${type}`]
    })
    out.push(`/** The relation fields of \`${collection.name}\` as they read with \`expand=<field>\`. */`)
    out.push(
      relations.length === 0
        ? `export interface ${expand} {}`
        : `export interface ${expand} {\n${relations.join('\n')}\n}`,
      '',
    )
  }
  const entries = (pick: 'record' | 'expand') =>
    collections.map((c) => `  ${propertyName(c.name)}: ${names.get(c.name)![pick]}`).join('\n')
  out.push(
    '/** Every collection by name: the type parameter of `createClient<Collections>()` (@plinth/client). */',
    collections.length === 0
      ? 'export interface Collections {}'
      : `export interface Collections {\n${entries('record')}\n}`,
    '',
    "/** Every collection's expandable relation fields. */",
    collections.length === 0
      ? 'export interface CollectionExpands {}'
      : `export interface CollectionExpands {\n${entries('expand')}\n}`,
    '',
    '/** A record of collection `C` read with `expand=` naming the relation fields `K` (one level). */',
    'export type Expanded<C extends keyof Collections, K extends keyof CollectionExpands[C] = keyof CollectionExpands[C]> =',
    '  Omit<Collections[C], K> & Pick<CollectionExpands[C], K>',
    '',
  )
  return out.join('\n')
}

/** The collection names a --collections list asks for that the project does not have (or the caller cannot see). */
export function unknownNames(wanted: readonly string[], collections: readonly WireCollection[]): string[] {
  const known = new Set(collections.map((c) => c.name))
  return wanted.filter((name) => !known.has(name)).map((name) => literal(name))
}
