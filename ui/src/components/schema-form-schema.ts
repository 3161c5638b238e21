/** The part of JSON Schema (draft 2020-12, as the server writes it) the form reads. */
export interface JsonSchema {
  type?: string | string[]
  title?: string
  description?: string
  default?: unknown
  const?: unknown
  enum?: unknown[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: boolean | JsonSchema
  items?: JsonSchema
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
  pattern?: string
  $ref?: string
}

export type Kind =
  | 'map'
  | 'const'
  | 'enum'
  | 'text'
  | 'number'
  | 'boolean'
  | 'object'
  | 'multi'
  | 'list'
  | 'objects'
  | 'variant'
  | 'any'
  | 'json'

/** Config paths (`message`, `auth.token`, `values[1]`) → the message the server gave for them. */
export type FieldErrors = Readonly<Record<string, string>>

const typeOf = (s: JsonSchema): string | undefined =>
  Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type

const isScalar = (s: JsonSchema) => ['string', 'number', 'integer'].includes(typeOf(s) ?? '') && !s.enum

/** The property of every variant holding a `const`: how a oneOf of objects says which one it is. */
export function discriminatorOf(variants: JsonSchema[]): string | null {
  const first = variants[0]?.properties
  if (!first) return null
  for (const [name, prop] of Object.entries(first)) {
    if (prop.const === undefined) continue
    if (variants.every((v) => v.properties?.[name]?.const !== undefined)) return name
  }
  return null
}

export function kindOf(s: JsonSchema, depth: number): Kind {
  if (s.$ref) return 'json'
  if (s.const !== undefined) return 'const'
  if (s.enum) return 'enum'
  const variants = s.oneOf ?? s.anyOf
  if (variants) {
    if (variants.every((v) => typeOf(v) === 'object' && v.properties) && discriminatorOf(variants) && depth < 3)
      return 'variant'
    if (variants.every(isScalar)) return variants.some((v) => typeOf(v) === 'string') ? 'text' : 'number'
    return 'json'
  }
  switch (typeOf(s)) {
    case 'string':
      return 'text'
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'object': {
      if (s.properties && Object.keys(s.properties).length > 0) return depth < 3 ? 'object' : 'json'
      const extra = s.additionalProperties
      if (!s.properties && typeof extra === 'object' && isScalar(extra)) return 'map'
      return 'json'
    }
    case 'array': {
      const items = s.items
      if (!items) return 'json'
      if (items.enum && items.enum.every((v) => typeof v === 'string')) return 'multi'
      if (isScalar(items) || (items.anyOf ?? items.oneOf)?.every(isScalar)) return 'list'
      if (typeOf(items) === 'object' && items.properties && depth < 2) return 'objects'
      return 'json'
    }
    case undefined:
      return 'any'
    default:
      return 'json'
  }
}

/** What a person reads under a field: its description, its default and its bounds. */
export function hintOf(s: JsonSchema): string | undefined {
  const parts: string[] = []
  if (s.description) parts.push(s.description.endsWith('.') ? s.description : `${s.description}.`)
  if (s.default !== undefined && !(Array.isArray(s.default) && s.default.length === 0))
    parts.push(`Default: ${JSON.stringify(s.default)}.`)
  const t = typeOf(s)
  if ((t === 'number' || t === 'integer') && (s.minimum !== undefined || s.maximum !== undefined))
    parts.push(`From ${s.minimum ?? '−∞'} to ${s.maximum ?? '∞'}.`)
  return parts.length ? parts.join(' ') : undefined
}

const numeric = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/

/** Text typed into a number field: a number when it spells one, else the text (a template such as {{$steps.a.n}}). */
export function toNumberish(text: string): unknown {
  const t = text.trim()
  if (t === '') return undefined
  return numeric.test(t) ? Number(t) : text
}

/** Text typed into a field of any type: JSON when it parses, else the text itself (templates are text). */
export function toAny(text: string): unknown {
  if (text.trim() === '') return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export const shown = (value: unknown): string =>
  value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value)

export const child = (path: string, name: string) => (path ? `${path}.${name}` : name)

/** The errors at a path or under it (for fields that show a whole value as JSON). */
export function errorsUnder(errors: FieldErrors, path: string): string | undefined {
  const found = Object.entries(errors).filter(
    ([p]) => p === path || path === '' || p.startsWith(`${path}.`) || p.startsWith(`${path}[`),
  )
  if (found.length === 0) return undefined
  return found.map(([p, m]) => (p === path ? m : `${p}: ${m}`)).join('; ')
}

export interface Ctx {
  errors: FieldErrors
  /** The id of a <datalist> of template variables offered by text inputs. */
  suggestions?: string | undefined
}

export interface FieldProps {
  name: string
  schema: JsonSchema
  required: boolean
  value: unknown
  path: string
  depth: number
  ctx: Ctx
  onChange: (value: unknown) => void
}

export type Labelled = FieldProps & { label: string; hint?: string | undefined; error?: string | undefined }

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
