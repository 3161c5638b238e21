/**
 * How `plinth types` maps one field of a collection, as GET /api/v1/collections answers it, to the
 * TypeScript type of its value in a record the API answers. Written against the wire shape, not the
 * server's own types: the CLI may read an instance of another version, and an unknown field type becomes
 * `unknown` rather than a failure.
 */

/** A field as the collections API answers it (the properties the mapping reads). */
export interface WireField {
  name: string
  type: string
  required?: boolean
  enumValues?: string[]
  translatable?: boolean
  relationConfig?: { targetCollection: string; relationType: string }
  lookupConfig?: { relationField: string; targetField: string }
  rollupConfig?: { relationField: string; function: string; targetField?: string }
  resultType?: string
  structure?: { enforcement?: string; shape?: unknown }
}

/** A collection as the collections API answers it. */
export interface WireCollection {
  name: string
  schemaVersion?: number
  fields: WireField[]
}

/** The names of the shared types the output declares once (see gen-types-render.ts). */
export const shared = {
  json: 'PlinthJsonValue',
  geometry: 'PlinthGeometry',
  profile: 'PlinthUserProfile',
  record: 'PlinthRecord',
  anyRecord: 'PlinthAnyRecord',
} as const

/** What the mapping needs to know of the rest of the schema: other collections' fields and interface names. */
export interface MapContext {
  /** Every collection of the project by name (also those not generated: lookups read their fields). */
  collections: ReadonlyMap<string, WireCollection>
  /** The interface name of each generated collection; a relation to another is typed as `PlinthAnyRecord`. */
  interfaceOf: (collection: string) => string | undefined
}

/** A string as a TypeScript string literal. */
export function literal(value: string): string {
  return JSON.stringify(value)
}

/** A union of string literals; `never` for an empty list (no value can be written). */
function literalUnion(values: readonly string[] | undefined): string {
  return values && values.length > 0 ? values.map(literal).join(' | ') : 'never'
}

const plain: Record<string, string> = {
  text: 'string',
  richtext: 'string',
  email: 'string',
  url: 'string',
  phone: 'string',
  slug: 'string',
  uuid: 'string',
  integer: 'number',
  decimal: 'number',
  number: 'number',
  boolean: 'boolean',
  date: 'string',
  datetime: 'number',
  file: 'string',
  geo: shared.geometry,
  relation: 'string',
  enum: 'string',
  multi_enum: 'string[]',
  json: shared.json,
}

/**
 * A json field's `structure` shape as a type (addendum §4 grammar): objects' entries are optional and may be
 * null ("when present and not null, matches"), `additional: true` adds an index signature.
 */
export function shapeType(shape: unknown): string {
  const node = (shape ?? {}) as Record<string, unknown>
  switch (node.type) {
    case 'string':
      return 'string'
    case 'number':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'enum': {
      const values = Array.isArray(node.values) ? node.values : []
      return literalUnion(values.map((v) => (typeof v === 'string' ? v : String((v as { value: unknown }).value))))
    }
    case 'list':
      return `Array<${shapeType(node.items)}>`
    case 'map':
      return `Partial<Record<${shapeType(node.keys)}, ${shapeType(node.values)}>>`
    case 'object': {
      const entries = Object.entries((node.entries ?? {}) as Record<string, unknown>)
      const lines = entries.map(([key, value]) => `${propertyName(key)}?: ${shapeType(value)} | null`)
      if (node.additional === true) lines.push(`[key: string]: ${shared.json} | undefined`)
      return lines.length === 0 ? '{}' : `{ ${lines.join('; ')} }`
    }
    default:
      return shared.json
  }
}

/** A property name as written in an interface: bare when an identifier, quoted otherwise. */
export function propertyName(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : literal(name)
}

/** The type of a stored field's value, null aside (the caller adds `| null` for an optional field). */
function storedType(field: WireField): string {
  if (field.type === 'enum') return literalUnion(field.enumValues)
  if (field.type === 'multi_enum') return `Array<${literalUnion(field.enumValues)}>`
  if (field.type === 'relation' && field.relationConfig?.relationType === 'hasMany') return 'string[]'
  // Only a strict structure is a promise about every stored value; warn and off may hold anything.
  if (field.type === 'json' && field.structure?.enforcement === 'strict') return shapeType(field.structure.shape)
  return plain[field.type] ?? 'unknown'
}

/** The field of another collection a lookup reads, through its belongsTo relation, when the schema shows it. */
function lookupTarget(field: WireField, collection: WireCollection, ctx: MapContext): WireField | undefined {
  const relation = collection.fields.find((f) => f.name === field.lookupConfig?.relationField)
  const target = ctx.collections.get(relation?.relationConfig?.targetCollection ?? '')
  return target?.fields.find((f) => f.name === field.lookupConfig?.targetField)
}

/**
 * The type of a field's value in a record as the API answers it (no expand). Optional fields are `| null`;
 * hasMany relations and multi_enum too (an unset list reads as null). Lookups and rollups are always
 * `| null`: they are computed through the caller's permissions on the target, and read as null without them.
 */
export function valueType(field: WireField, collection: WireCollection, ctx: MapContext): string {
  let type: string
  if (field.type === 'lookup') {
    const target = lookupTarget(field, collection, ctx)
    type = target ? storedType(target) : (plain[field.resultType ?? ''] ?? 'unknown')
  } else if (field.type === 'rollup') {
    const fn = field.rollupConfig?.function
    type = fn === 'min' || fn === 'max' ? (plain[field.resultType ?? ''] ?? 'unknown') : 'number'
  } else {
    type = storedType(field)
  }
  const computed = field.type === 'lookup' || field.type === 'rollup'
  return computed || !field.required ? nullable(type) : type
}

/** `T | null` (`unknown` already holds null). */
function nullable(type: string): string {
  if (type === 'unknown') return type
  return `${type} | null`
}

/**
 * The type a relation field takes when expanded (`expand=<field>`): the target's record (or null) for
 * belongsTo, a list of them for hasMany. A relation to users expands to the user's profile, or stays the
 * id for a caller who may not see profiles. Undefined for a field that is not a relation.
 */
export function expandType(field: WireField, ctx: MapContext): string | undefined {
  const config = field.relationConfig
  if (field.type !== 'relation' || !config) return undefined
  const users = config.targetCollection === 'users'
  const target = users ? `${shared.profile} | string` : (ctx.interfaceOf(config.targetCollection) ?? shared.anyRecord)
  if (config.relationType === 'hasMany') return `Array<${target}>`
  return `${target} | null`
}

/** A short note for the field's doc comment: what the plain TypeScript type does not say. */
export function fieldNote(field: WireField): string {
  const notes: Record<string, string> = {
    date: 'date: YYYY-MM-DD',
    datetime: 'datetime: Unix seconds',
    decimal: 'decimal: a JSON number',
    integer: 'integer',
    uuid: 'uuid: lower case, with hyphens',
    email: 'email',
    url: 'url (http or https)',
    phone: 'phone',
    slug: 'slug',
    richtext: 'richtext',
    file: 'file: a file id',
    geo: 'geo: a GeoJSON geometry',
  }
  if (field.type === 'text' && field.translatable)
    return "translatable text: the request locale's text (a map with locale=*)"
  if (field.type === 'relation') {
    const c = field.relationConfig
    return `relation ${c?.relationType ?? ''} ${c?.targetCollection ?? ''}: ${c?.relationType === 'hasMany' ? 'ids' : 'an id'}`
  }
  if (field.type === 'lookup') return `lookup: ${field.lookupConfig?.relationField}.${field.lookupConfig?.targetField}`
  if (field.type === 'rollup') {
    const r = field.rollupConfig
    return `rollup: ${r?.function}(${r?.relationField}${r?.targetField ? `.${r.targetField}` : ''})`
  }
  if (field.type === 'json' && field.structure) return `json with a ${field.structure.enforcement ?? 'warn'} structure`
  return notes[field.type] ?? field.type
}
