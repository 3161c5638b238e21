import { AppError } from '../../../lib/errors.js'
import { MASK, maskSteps, maskTriggerConfig } from '../../automate/index.js'
import { forEachString } from '../document/compile.js'
import { brickKindOf, type BrickKindName } from '../kinds/index.js'
import { withoutPaths } from '../providers/canonical.js'
import type { BrickProvider } from '../providers/index.js'
import { namespacePlaceholder, type Namespacer } from './namespace.js'
import type { ExportItem } from './select.js'

/** A brick an export writes. */
export interface ExportBrick {
  id: string
  kind: BrickKindName
  needs: string[]
  body: Record<string, unknown>
}

/** The order bricks are written in: each kind after every kind it can name (a brick needs only earlier kinds). */
export const emitOrder: readonly BrickKindName[] = [
  'collection',
  'access',
  'role',
  'grants',
  'records',
  'container',
  'search-index',
  'script',
  'lens',
  'attachment',
  'renderer',
  'view',
  'webhook',
  'flow',
  'nav',
]

/** Kinds other bricks name: by their ref (id) always, and these by their name too. */
const namedByName = new Set<string>(['collection', 'role', 'container', 'search-index', 'script'])

type Json = Record<string, unknown>

/**
 * The bricks of an export (decision 071): each resource's create shape without what a plan does not compare
 * (it is the instance's: a script's limits, a container's storage, a nav item's place), a collection's access
 * left to its access brick, credentials masked; the namespace templated; every credential a secret
 * parameter; `needs` naming the earlier bricks whose resources a body names. Throws invalid_request naming
 * the resource: a name without the namespace (the naming rule would refuse it), text a document would read
 * as a parameter.
 */
export function exportBricks(
  items: readonly ExportItem[],
  providers: ReadonlyMap<string, BrickProvider>,
  ns: Namespacer,
): { bricks: ExportBrick[]; secrets: string[] } {
  const sorted = [...items].sort(
    (a, b) =>
      emitOrder.indexOf(a.kind) - emitOrder.indexOf(b.kind) || compare(a.label, b.label) || compare(a.ref, b.ref),
  )
  const ids = brickIds(sorted, ns)
  const byRef = new Map<string, string>()
  sorted.forEach((item, i) => {
    if (item.kind === 'records' || item.kind === 'access' || item.kind === 'grants') return
    byRef.set(item.ref, ids[i]!)
    if (namedByName.has(item.kind)) byRef.set(String(item.shape.name), ids[i]!)
  })
  const kindOf = new Map(sorted.map((item, i) => [ids[i]!, item.kind]))

  const unnamed: string[] = []
  const secrets = new Set<string>()
  const bricks = sorted.map((item, i): ExportBrick => {
    const id = ids[i]!
    refuseParameterText(item)
    const body = templated(item.kind, prepared(item, providers), ns)
    const namedBy = brickKindOf(item.kind)?.namedBy
    if (namedBy && !String(body[namedBy] ?? '').includes(namespacePlaceholder))
      unnamed.push(`${item.kind} ${JSON.stringify(item.label)}`)
    const needs = new Set<string>()
    forEachString(item.shape, (text) => {
      // A name as it stands, the last segment of a path (collections/x), or a flow's runAs role (role:x).
      for (const candidate of [text, text.slice(text.lastIndexOf('/') + 1), text.slice(text.indexOf(':') + 1)]) {
        const other = byRef.get(candidate)
        if (other !== undefined && emitOrder.indexOf(kindOf.get(other)!) < emitOrder.indexOf(item.kind))
          needs.add(other)
      }
    })
    return { id, kind: item.kind, needs: [...needs].sort(), body: withSecrets(id, item.kind, body, secrets) }
  })
  if (unnamed.length > 0)
    throw new AppError(
      'invalid_request',
      `Every created name embeds the namespace (the naming rule): ${unnamed.slice(0, 10).join(', ')}${unnamed.length > 10 ? ', …' : ''} ${unnamed.length === 1 ? 'does' : 'do'} not`,
      { code: 'naming.missing_namespace', resources: unnamed },
    )
  return { bricks, secrets: [...secrets] }
}

/** The body before templating: the create shape as a brick states it. */
function prepared(item: ExportItem, providers: ReadonlyMap<string, BrickProvider>): Json {
  const provider = providers.get(item.kind)
  const shape = withoutPaths(item.shape, provider?.notCompared ?? [])
  switch (item.kind) {
    // After creation a collection's access is its access brick's; a collection brick states private (spec).
    case 'collection':
      return { ...shape, accessPreset: 'private' }
    case 'flow':
      return {
        ...shape,
        triggerConfig: maskTriggerConfig(String(shape.triggerType), (shape.triggerConfig ?? {}) as Json),
        operations: maskSteps((shape.operations ?? []) as unknown[]),
      }
    // Whatever a reader gives, a webhook's secret and header values are never exported.
    case 'webhook': {
      const headers = (shape.headers ?? {}) as Json
      const { secret, ...rest } = shape
      return {
        ...rest,
        ...(secret === undefined || secret === null ? {} : { secret: MASK }),
        ...(Object.keys(headers).length === 0
          ? {}
          : { headers: Object.fromEntries(Object.keys(headers).map((h) => [h, MASK])) }),
      }
    }
    default:
      return shape
  }
}

/** The namespace templated: in the naming member as a word, elsewhere in whole resource names; seed rows as stored. */
function templated(kind: BrickKindName, body: Json, ns: Namespacer): Json {
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return ns.text(value)
    if (Array.isArray(value)) return value.map(walk)
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]))
    return value
  }
  if (kind === 'records') return { ...body, collection: ns.text(String(body.collection)) }
  const out = walk(body) as Json
  const naming = kind === 'nav' ? 'label' : 'name'
  if (typeof body[naming] === 'string') out[naming] = ns.name(body[naming])
  return out
}

/**
 * Every masked credential (`MASK`) a secret parameter, `${params.<name>}`, its name made from the brick id
 * and the path (a flow step by its key): declared in the envelope as a secret, so it compiles to
 * `${secret:<name>}` and its value is given at install time. Seed rows are data, never touched.
 */
function withSecrets(brickId: string, kind: BrickKindName, body: Json, secrets: Set<string>): Json {
  if (kind === 'records') return body
  const walk = (value: unknown, path: string[]): unknown => {
    if (value === MASK) {
      const name = secretName([brickId, ...path], secrets)
      secrets.add(name)
      return `\${params.${name}}`
    }
    if (Array.isArray(value))
      return value.map((v, i) => {
        const key = v !== null && typeof v === 'object' && typeof (v as Json).key === 'string' ? (v as Json).key : i
        return walk(v, [...path, String(key)])
      })
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, walk(v, k === 'config' ? path : [...path, k])]),
      )
    return value
  }
  return walk(body, []) as Json
}

function secretName(parts: readonly string[], taken: ReadonlySet<string>): string {
  const base = parts
    .join('_')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 58)
  // A brick id starts with its kind: the name starts with a letter.
  let name = base
  for (let n = 2; taken.has(name); n++) name = `${base}_${n}`
  return name
}

/** `<kind>.<name without the namespace>`, unique (a number added), at most 64 characters. */
function brickIds(items: readonly ExportItem[], ns: Namespacer): string[] {
  const taken = new Set<string>()
  return items.map((item) => {
    const slug =
      ns
        .name(item.label)
        .replaceAll(namespacePlaceholder, ' ')
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-+|-+$/g, '')
        .slice(0, 50 - item.kind.length) || 'item'
    const base = `${item.kind}.${slug.replace(/-+$/, '')}`
    let id = base
    for (let n = 2; taken.has(id); n++) id = `${base}-${n}`
    taken.add(id)
    return id
  })
}

/** A string a document would read as a parameter or a secret is not exportable as it stands. */
function refuseParameterText(item: ExportItem): void {
  forEachString(item.shape, (text) => {
    if (text.includes('${params.') || text.includes('${secret:'))
      throw new AppError(
        'invalid_request',
        `The ${item.kind} ${JSON.stringify(item.label)} holds the text \${params. or \${secret:, which a blueprint reads as a parameter`,
        { kind: item.kind, name: item.label },
      )
  })
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
