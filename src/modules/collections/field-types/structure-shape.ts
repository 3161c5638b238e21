/**
 * The `structure` of a json field (addendum §4): how strictly it is enforced, and the Shape its value
 * should have. Parsed once, when a collection is created or patched; stored normalised (enum values as
 * objects, `additional` filled in, `enforcement` defaulted), so everything that reads it later trusts it.
 */

export type Enforcement = 'off' | 'warn' | 'strict'
export const enforcements: readonly Enforcement[] = ['off', 'warn', 'strict']

/** A label: one string for every locale, or a locale → string map. */
export type Label = string | Readonly<Record<string, string>>

export interface EnumValue {
  readonly value: string
  readonly label?: Label
}

interface Labelled {
  readonly label?: Label
}

export interface EnumShape extends Labelled {
  readonly type: 'enum'
  readonly values: readonly EnumValue[]
}
export interface ObjectShape extends Labelled {
  readonly type: 'object'
  readonly entries: Readonly<Record<string, Shape>>
  /** Whether keys other than the entries are allowed (default false). */
  readonly additional: boolean
}
export interface ListShape extends Labelled {
  readonly type: 'list'
  readonly items: Shape
}
export interface MapShape extends Labelled {
  readonly type: 'map'
  readonly keys: EnumShape
  readonly values: Shape
}
export interface ScalarShape extends Labelled {
  readonly type: 'string' | 'number' | 'boolean'
}
export type Shape = EnumShape | ObjectShape | ListShape | MapShape | ScalarShape

export interface Structure {
  readonly enforcement: Enforcement
  readonly shape: Shape
}

export const structureLimits = {
  depth: 16,
  nodes: 2000,
  enumValues: 1000,
  valueChars: 200,
  entries: 500,
  keyChars: 200,
  labelChars: 200,
  labelLocales: 50,
} as const

/** Where in the definition a problem is: keys and indices below `structure`. */
export type DefinitionPath = (string | number)[]

export type StructureParse = { ok: true; structure: Structure } | { ok: false; path: DefinitionPath; message: string }

const localePattern = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8}){0,4}$/
const shapeTypes = ['enum', 'object', 'list', 'map', 'string', 'number', 'boolean'] as const
const allowedKeys: Readonly<Record<Shape['type'], readonly string[]>> = {
  enum: ['type', 'values', 'label'],
  object: ['type', 'entries', 'additional', 'label'],
  list: ['type', 'items', 'label'],
  map: ['type', 'keys', 'values', 'label'],
  string: ['type', 'label'],
  number: ['type', 'label'],
  boolean: ['type', 'label'],
}

class Problem extends Error {
  constructor(
    readonly path: DefinitionPath,
    message: string,
  ) {
    super(message)
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

const show = (value: string) => JSON.stringify(value.slice(0, 40))

/**
 * Checks a client's `structure` and returns it normalised, or the first problem with its path below
 * `structure` (e.g. `shape.entries.biome.items.values.3.value`). Never throws.
 */
export function parseStructure(input: unknown): StructureParse {
  try {
    if (!isRecord(input)) throw new Problem([], 'must be an object { enforcement, shape }')
    for (const key of Object.keys(input)) {
      if (key !== 'enforcement' && key !== 'shape')
        throw new Problem([key], 'is not a structure property (enforcement, shape)')
    }
    const enforcement = input.enforcement ?? 'warn'
    if (typeof enforcement !== 'string' || !(enforcements as readonly string[]).includes(enforcement)) {
      throw new Problem(['enforcement'], 'must be "off", "warn" or "strict"')
    }
    if (input.shape === undefined) throw new Problem(['shape'], 'is required')
    const counter = { nodes: 0 }
    const shape = parseShape(input.shape, ['shape'], 1, counter)
    return { ok: true, structure: { enforcement: enforcement as Enforcement, shape } }
  } catch (err) {
    if (err instanceof Problem) return { ok: false, path: err.path, message: err.message }
    throw err
  }
}

function parseShape(input: unknown, path: DefinitionPath, depth: number, counter: { nodes: number }): Shape {
  if (depth > structureLimits.depth) throw new Problem(path, `nests deeper than ${structureLimits.depth} levels`)
  if (++counter.nodes > structureLimits.nodes)
    throw new Problem(path, `a shape has at most ${structureLimits.nodes} nodes`)
  if (!isRecord(input)) throw new Problem(path, 'must be a shape object with a type')
  const type = input.type
  if (typeof type !== 'string' || !(shapeTypes as readonly string[]).includes(type)) {
    throw new Problem([...path, 'type'], `must be one of ${shapeTypes.join(', ')}`)
  }
  const kind = type as Shape['type']
  for (const key of Object.keys(input)) {
    if (!allowedKeys[kind].includes(key))
      throw new Problem([...path, key], `does not apply to a ${kind} shape (${allowedKeys[kind].join(', ')})`)
  }
  const label = input.label === undefined ? undefined : parseLabel(input.label, [...path, 'label'])
  const labelled = label === undefined ? {} : { label }
  switch (kind) {
    case 'enum':
      return { type: 'enum', values: parseEnumValues(input.values, [...path, 'values']), ...labelled }
    case 'object': {
      const entries = input.entries ?? {}
      if (!isRecord(entries)) throw new Problem([...path, 'entries'], 'must be an object of key → shape')
      const keys = Object.keys(entries)
      if (keys.length > structureLimits.entries)
        throw new Problem([...path, 'entries'], `at most ${structureLimits.entries} entries`)
      // fromEntries defines own properties, so even a key named __proto__ stays a plain entry.
      const parsed: Record<string, Shape> = Object.fromEntries(
        keys.map((key) => {
          checkKey(key, [...path, 'entries', key])
          return [key, parseShape(entries[key], [...path, 'entries', key], depth + 1, counter)]
        }),
      )
      const additional = input.additional ?? false
      if (typeof additional !== 'boolean') throw new Problem([...path, 'additional'], 'must be true or false')
      return { type: 'object', entries: parsed, additional, ...labelled }
    }
    case 'list':
      if (input.items === undefined) throw new Problem([...path, 'items'], 'is required')
      return { type: 'list', items: parseShape(input.items, [...path, 'items'], depth + 1, counter), ...labelled }
    case 'map': {
      if (input.keys === undefined) throw new Problem([...path, 'keys'], 'is required')
      if (input.values === undefined) throw new Problem([...path, 'values'], 'is required')
      const keys = parseShape(input.keys, [...path, 'keys'], depth + 1, counter)
      if (keys.type !== 'enum') throw new Problem([...path, 'keys', 'type'], 'the keys of a map are an enum shape')
      return {
        type: 'map',
        keys,
        values: parseShape(input.values, [...path, 'values'], depth + 1, counter),
        ...labelled,
      }
    }
    default:
      return { type: kind, ...labelled }
  }
}

function parseEnumValues(input: unknown, path: DefinitionPath): EnumValue[] {
  if (!Array.isArray(input) || input.length === 0)
    throw new Problem(path, 'must be a non-empty list of { value, label }')
  if (input.length > structureLimits.enumValues) throw new Problem(path, `at most ${structureLimits.enumValues} values`)
  const seen = new Set<string>()
  return input.map((item: unknown, index) => {
    // A bare string is shorthand for { value }.
    const entry = typeof item === 'string' ? { value: item } : item
    if (!isRecord(entry)) throw new Problem([...path, index], 'must be { value, label } or a string')
    for (const key of Object.keys(entry)) {
      if (key !== 'value' && key !== 'label')
        throw new Problem([...path, index, key], 'is not an enum value property (value, label)')
    }
    const value = entry.value
    if (typeof value !== 'string' || value.length === 0 || value.length > structureLimits.valueChars) {
      throw new Problem([...path, index, 'value'], `must be a string of 1 to ${structureLimits.valueChars} characters`)
    }
    if (value.includes('\u0000')) throw new Problem([...path, index, 'value'], 'must not contain U+0000')
    if (seen.has(value)) throw new Problem([...path, index, 'value'], `${show(value)} is listed twice`)
    seen.add(value)
    return entry.label === undefined ? { value } : { value, label: parseLabel(entry.label, [...path, index, 'label']) }
  })
}

function parseLabel(input: unknown, path: DefinitionPath): Label {
  if (typeof input === 'string') {
    if (input.length === 0 || input.length > structureLimits.labelChars)
      throw new Problem(path, `must be 1 to ${structureLimits.labelChars} characters`)
    return input
  }
  if (!isRecord(input)) throw new Problem(path, 'must be a string or a locale → string map')
  const entries = Object.entries(input)
  if (entries.length === 0 || entries.length > structureLimits.labelLocales)
    throw new Problem(path, `must name 1 to ${structureLimits.labelLocales} locales`)
  const out: Record<string, string> = {}
  for (const [locale, text] of entries) {
    if (!localePattern.test(locale)) throw new Problem([...path, locale], 'is not a BCP-47 locale')
    if (typeof text !== 'string' || text.length === 0 || text.length > structureLimits.labelChars) {
      throw new Problem([...path, locale], `must be a string of 1 to ${structureLimits.labelChars} characters`)
    }
    out[locale] = text
  }
  return out
}

function checkKey(key: string, path: DefinitionPath): void {
  if (key.length === 0 || key.length > structureLimits.keyChars)
    throw new Problem(path, `a key has 1 to ${structureLimits.keyChars} characters`)
  if (key.includes('\u0000')) throw new Problem(path, 'a key must not contain U+0000')
}

/** A shape without its labels: what decides whether a value is valid (labels never do). */
export function withoutLabels(shape: Shape): Shape {
  switch (shape.type) {
    case 'enum':
      return { type: 'enum', values: shape.values.map((v) => ({ value: v.value })) }
    case 'object':
      return {
        type: 'object',
        entries: Object.fromEntries(Object.entries(shape.entries).map(([k, s]) => [k, withoutLabels(s)])),
        additional: shape.additional,
      }
    case 'list':
      return { type: 'list', items: withoutLabels(shape.items) }
    case 'map':
      return { type: 'map', keys: withoutLabels(shape.keys) as EnumShape, values: withoutLabels(shape.values) }
    default:
      return { type: shape.type }
  }
}

/**
 * Whether every value valid under `before` is also valid under `after` (labels aside): added enum values,
 * new object entries, `additional` turned on. A strict field may change its shape this way without a scan.
 */
export function shapeWidens(before: Shape, after: Shape): boolean {
  switch (before.type) {
    case 'enum': {
      if (after.type === 'string') return true
      if (after.type !== 'enum') return false
      const allowed = new Set(after.values.map((v) => v.value))
      return before.values.every((v) => allowed.has(v.value))
    }
    case 'object': {
      if (after.type !== 'object') return false
      if (before.additional && !after.additional) return false
      for (const [key, shape] of Object.entries(before.entries)) {
        const next = ownEntry(after, key)
        if (next === undefined) {
          if (!after.additional) return false
        } else if (!shapeWidens(shape, next)) return false
      }
      // Anything went under an open object: a newly declared entry would constrain it.
      return !before.additional || Object.keys(after.entries).every((key) => Object.hasOwn(before.entries, key))
    }
    case 'list':
      return after.type === 'list' && shapeWidens(before.items, after.items)
    case 'map':
      return after.type === 'map' && shapeWidens(before.keys, after.keys) && shapeWidens(before.values, after.values)
    default:
      return after.type === before.type
  }
}

/** The declared entry of an object shape under a key (own properties only: `__proto__` is just a key). */
export function ownEntry(shape: ObjectShape, key: string): Shape | undefined {
  return Object.hasOwn(shape.entries, key) ? shape.entries[key] : undefined
}
