import { ownEntry, type EnumShape, type Label, type Shape } from './structure-shape.js'

/**
 * Checking a JSON value against a Shape, and the path notation shared by write errors, scan groups,
 * repair fixes and option sets:
 *
 *   $            the value itself (an enum column, or a json field's root)
 *   a.b          entry b of entry a (a key that is not a plain name is written ["odd key"])
 *   a[2] / a[]   an item of list a; scans and option sets collapse every index to []
 *   m.fr / m{}   the value under a key of map m; collapsed, every value of the map is m{}
 *   m{key}       the keys of map m
 *
 * Entry and key matches are own-property checks, so `__proto__` or `constructor` is just a key.
 */

export type Segment =
  | { readonly kind: 'entry'; readonly key: string }
  | { readonly kind: 'item'; readonly index: number }
  | { readonly kind: 'value'; readonly key: string }
  | { readonly kind: 'keys' }

export type IssueCode = 'enum' | 'unknown-key' | 'key' | 'type'

export interface StructureIssue {
  readonly code: IssueCode
  /** enum and type: the location of the value; unknown-key: the object; key: the map followed by `keys`. */
  readonly path: readonly Segment[]
  /** enum: the value; unknown-key and key: the key. */
  readonly value?: string
  /** The shape that refused: the enum (enum), the object (unknown-key), the map's keys (key), the expected shape (type). */
  readonly shape: Shape
  /** type: what the value is (`a number`, `null`…). */
  readonly got?: string
}

const plainKey = /^[A-Za-z_][A-Za-z0-9_-]*$/

/** A path as text; `collapsed` writes every list index as [] and every map value as {}. */
export function renderPath(path: readonly Segment[], collapsed: boolean): string {
  let out = '$'
  for (const segment of path) {
    switch (segment.kind) {
      case 'entry':
        out += keyPart(segment.key)
        break
      case 'item':
        out += collapsed ? '[]' : `[${segment.index}]`
        break
      case 'value':
        out += collapsed ? '{}' : keyPart(segment.key)
        break
      case 'keys':
        out += '{key}'
        break
    }
  }
  return out.startsWith('$.') ? out.slice(2) : out
}

function keyPart(key: string): string {
  return plainKey.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`
}

/** What a JSON value is, for messages: `a string`, `a number`, `an object`, `null`… */
export function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'string') return 'a string'
  if (typeof value === 'number') return 'a number'
  if (typeof value === 'boolean') return 'a boolean'
  return `a ${typeof value}`
}

/** What a shape expects, for messages. */
export function expectedOf(shape: Shape): string {
  switch (shape.type) {
    case 'enum':
      return 'one of the allowed values (a string)'
    case 'object':
      return 'an object'
    case 'list':
      return 'a list'
    case 'map':
      return 'an object (a map)'
    default:
      return `a ${shape.type}`
  }
}

const enumSets = new WeakMap<EnumShape, ReadonlySet<string>>()

/** The allowed values of an enum shape as a set, built once per shape object. */
export function allowedValues(shape: EnumShape): ReadonlySet<string> {
  let set = enumSets.get(shape)
  if (!set) {
    set = new Set(shape.values.map((v) => v.value))
    enumSets.set(shape, set)
  }
  return set
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Walks a (non-null) value against a shape and hands every issue to `visit`; stops when `visit` returns
 * false. An object entry that is missing or null is fine (entries are optional); a null list item or map
 * value is a type issue.
 */
export function visitIssues(value: unknown, shape: Shape, visit: (issue: StructureIssue) => boolean | void): void {
  walk(value, shape, [], visit)
}

function walk(
  value: unknown,
  shape: Shape,
  path: Segment[],
  visit: (issue: StructureIssue) => boolean | void,
): boolean {
  const typeIssue = () => visit({ code: 'type', path: [...path], shape, got: kindOf(value) }) !== false
  switch (shape.type) {
    case 'enum':
      if (typeof value !== 'string') return typeIssue()
      if (!allowedValues(shape).has(value)) return visit({ code: 'enum', path: [...path], value, shape }) !== false
      return true
    case 'string':
    case 'number':
    case 'boolean':
      return typeof value === shape.type ? true : typeIssue()
    case 'object': {
      if (!isObject(value)) return typeIssue()
      for (const key of Object.keys(value)) {
        const entry = ownEntry(shape, key)
        if (entry === undefined) {
          if (!shape.additional && visit({ code: 'unknown-key', path: [...path], value: key, shape }) === false)
            return false
          continue
        }
        const item = value[key]
        if (item === null || item === undefined) continue
        path.push({ kind: 'entry', key })
        const go = walk(item, entry, path, visit)
        path.pop()
        if (!go) return false
      }
      return true
    }
    case 'list': {
      if (!Array.isArray(value)) return typeIssue()
      for (let index = 0; index < value.length; index++) {
        path.push({ kind: 'item', index })
        const go = walkItem(value[index], shape.items, path, visit)
        path.pop()
        if (!go) return false
      }
      return true
    }
    case 'map': {
      if (!isObject(value)) return typeIssue()
      const keys = allowedValues(shape.keys)
      for (const key of Object.keys(value)) {
        if (
          !keys.has(key) &&
          visit({ code: 'key', path: [...path, { kind: 'keys' }], value: key, shape: shape.keys }) === false
        )
          return false
        path.push({ kind: 'value', key })
        const go = walkItem(value[key], shape.values, path, visit)
        path.pop()
        if (!go) return false
      }
      return true
    }
  }
}

function walkItem(
  value: unknown,
  shape: Shape,
  path: Segment[],
  visit: (issue: StructureIssue) => boolean | void,
): boolean {
  if (value === null || value === undefined)
    return visit({ code: 'type', path: [...path], shape, got: 'null' }) !== false
  return walk(value, shape, path, visit)
}

/** The first issue of a value, or null when it matches the shape. */
export function firstIssue(value: unknown, shape: Shape): StructureIssue | null {
  let found: StructureIssue | null = null
  visitIssues(value, shape, (issue) => {
    found = issue
    return false
  })
  return found
}

/** One issue as a sentence (values cut short), for write errors and scan groups. */
export function describeIssue(issue: StructureIssue): string {
  const value = JSON.stringify((issue.value ?? '').slice(0, 60))
  switch (issue.code) {
    case 'enum':
      return `${value} is not an allowed value (${choices(issue.shape)})`
    case 'unknown-key':
      return `unknown key ${value}`
    case 'key':
      return `${value} is not an allowed key (${choices(issue.shape)})`
    case 'type':
      return `expected ${expectedOf(issue.shape)}, got ${issue.got ?? 'something else'}`
  }
}

function choices(shape: Shape): string {
  if (shape.type === 'object') {
    const keys = Object.keys(shape.entries)
    return keys.length === 0
      ? 'no keys are declared'
      : `declared: ${keys
          .slice(0, 10)
          .map((k) => JSON.stringify(k.slice(0, 40)))
          .join(', ')}${keys.length > 10 ? ', …' : ''}`
  }
  if (shape.type !== 'enum') return expectedOf(shape)
  const shown = shape.values.slice(0, 10).map((v) => JSON.stringify(v.value.slice(0, 40)))
  return `one of ${shown.join(', ')}${shape.values.length > 10 ? ', …' : ''}`
}

/** One place in a shape where values live (or, for a map, where its keys do). */
export interface ShapeLocation {
  /** Collapsed path (`$`, `biome[]`, `tags{key}`…). */
  readonly path: string
  readonly segments: readonly Segment[]
  /** The shape of what lives there; for a map's keys, the keys enum. */
  readonly shape: Shape
  /** The object shape holding the location as an entry, the list or map holding it, or null at the root. */
  readonly parent: Shape | null
  /** The entry key it sits under, the nearest one above it. */
  readonly entryKey: string | null
  /** True where the location holds several values of one kind: list items and map keys. */
  readonly multiple: boolean
}

/** Every location of a shape, depth first, the root first. */
export function shapeLocations(shape: Shape): ShapeLocation[] {
  const out: ShapeLocation[] = []
  const visit = (
    node: Shape,
    segments: Segment[],
    parent: Shape | null,
    entryKey: string | null,
    multiple: boolean,
  ) => {
    out.push({ path: renderPath(segments, true), segments, shape: node, parent, entryKey, multiple })
    if (node.type === 'object') {
      for (const [key, child] of Object.entries(node.entries))
        visit(child, [...segments, { kind: 'entry', key }], node, key, false)
    } else if (node.type === 'list') {
      visit(node.items, [...segments, { kind: 'item', index: 0 }], node, entryKey, true)
    } else if (node.type === 'map') {
      out.push({
        path: renderPath([...segments, { kind: 'keys' }], true),
        segments: [...segments, { kind: 'keys' }],
        shape: node.keys,
        parent: node,
        entryKey,
        multiple: true,
      })
      visit(node.values, [...segments, { kind: 'value', key: '' }], node, entryKey, false)
    }
  }
  visit(shape, [], null, null, false)
  return out
}

/** The label of a shape or enum value in a locale: exact, then the language alone, then `fallback`, then null. */
export function labelIn(label: Label | undefined, locale: string, fallback: string | null): string | null {
  if (label === undefined) return null
  if (typeof label === 'string') return label
  for (const wanted of [locale, locale.split('-')[0]!, fallback]) {
    if (wanted === null) continue
    const hit = Object.entries(label).find(([key]) => key.toLowerCase() === wanted.toLowerCase())
    if (hit) return hit[1]
  }
  if (fallback !== null) {
    const base = fallback.split('-')[0]!.toLowerCase()
    const hit = Object.entries(label).find(([key]) => key.toLowerCase() === base)
    if (hit) return hit[1]
  }
  return null
}
