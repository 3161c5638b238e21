import { AppError, isAppError } from '../../lib/errors.js'
import { targetsUsers, type FieldDef } from '../collections/index.js'
import { readValue } from './codec.js'
import type { Opened, Opener } from './context.js'
import type { ApiRecord } from './events.js'
import { present, shows } from './present.js'
import type { Row } from './store.js'
import { expandUsers } from './user-relations.js'

export const expandLimits = { paths: 10, depth: 3 } as const

/** `author,author.team,tags` → [['author'], ['author','team'], ['tags']]. Throws invalid_request. */
export function parseExpand(raw: string | undefined): string[][] {
  if (!raw) return []
  const paths = raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => p.split('.'))
  if (paths.length > expandLimits.paths)
    throw new AppError('invalid_request', `expand takes at most ${expandLimits.paths} paths`)
  for (const path of paths) {
    if (path.length > expandLimits.depth)
      throw new AppError('invalid_request', `expand goes at most ${expandLimits.depth} levels deep`)
    if (path.some((segment) => !/^[a-z][a-z0-9_]{0,49}$/.test(segment)))
      throw new AppError('invalid_request', 'expand names relation fields')
  }
  return paths
}

/** Relation ids a row holds in a field: one id (belongsTo) or a list (hasMany). */
function idsOf(source: Opened, def: FieldDef, row: Row): string[] {
  const value = readValue(def, row[def.name], source.shape.kind)
  if (typeof value === 'string') return [value]
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
}

/**
 * Opens the target of a relation for reading, or null when the caller may not read it (expand shows null
 * / [], a filter through it matches nothing).
 */
export async function openTarget(open: Opener, source: Opened, collection: string): Promise<Opened | null> {
  try {
    return await open(source.principal, collection, 'read', source.locale)
  } catch (err) {
    if (isAppError(err) && ['forbidden', 'unauthorized', 'collection_not_found'].includes(err.code)) return null
    throw err
  }
}

/** The target rows of a relation field for all source rows, in one query (never one per row). */
async function fetchTargets(open: Opener, source: Opened, def: FieldDef, rows: readonly Row[]) {
  const target = await openTarget(open, source, def.relationConfig!.targetCollection)
  if (!target) return { target: null, byId: new Map<string, Row>() }
  const ids = [...new Set(rows.flatMap((row) => idsOf(source, def, row)))]
  const found = await target.store.byIds(ids, target.scope.rows)
  return { target, byId: new Map(found.map((r) => [String(r.id), r])) }
}

/**
 * Fills in what a page of records needs beyond its own columns: computed fields (lookup, rollup) and the
 * expanded relations, level by level, batched per field. A target the caller may not read expands to
 * null (belongsTo) or [] (hasMany); its records outside the caller's scope are left out.
 */
export async function enrich(
  open: Opener,
  source: Opened,
  rows: readonly Row[],
  records: ApiRecord[],
  expand: readonly string[][],
  options: { projection: ReadonlySet<string> | null },
): Promise<void> {
  const heads = new Map<string, string[][]>()
  for (const [head, ...rest] of expand) {
    const children = heads.get(head!) ?? []
    if (rest.length > 0) children.push(rest)
    heads.set(head!, children)
  }
  // Every level's names are checked even when a page (or a level of it) is empty: a bad expand is 400
  // whatever the data.
  for (const head of heads.keys()) relationOf(source, head)
  const view = { locale: source.locale, projection: options.projection, allowlist: source.scope.fields }
  if (rows.length > 0) {
    for (const def of source.shape.computed) {
      if (shows(def.name, view)) await compute(open, source, def, rows, records)
    }
  }
  for (const [head, children] of heads) {
    const def = relationOf(source, head)
    // A relation field the caller may not read stays absent, expanded or not (asking to expand it
    // includes it even when `fields` does not name it).
    if (!shows(head, { ...view, projection: null })) continue
    if (targetsUsers(def)) {
      await expandUsers(source, def, rows, records, children)
      continue
    }
    const many = def.relationConfig!.relationType === 'hasMany'
    const { target, byId } = await fetchTargets(open, source, def, rows)
    const targetRows = target ? [...byId.values()] : []
    const targetRecords = targetRows.map((r) =>
      present(target!.shape, r, { locale: source.locale, projection: null, allowlist: target!.scope.fields }),
    )
    if (target) await enrich(open, target, targetRows, targetRecords, children, { projection: null })
    const recordById = new Map(targetRecords.map((r) => [String(r.id), r]))
    rows.forEach((row, i) => {
      const ids = idsOf(source, def, row)
      const linked = ids.map((id) => recordById.get(id)).filter((r): r is ApiRecord => r !== undefined)
      records[i]![head] = many ? linked : (linked[0] ?? null)
    })
  }
}

/** The relation field an expand path names at this level. Throws invalid_request. */
function relationOf(source: Opened, head: string): FieldDef {
  const def = source.shape.byName.get(head)
  if (!def || def.type !== 'relation' || !def.relationConfig) {
    throw new AppError('invalid_request', `expand: "${head}" is not a relation field of ${source.collection.name}`, {
      field: head,
    })
  }
  return def
}

/** A lookup (a target field through a belongsTo) or a rollup (an aggregate over a hasMany), per row. */
async function compute(
  open: Opener,
  source: Opened,
  def: FieldDef,
  rows: readonly Row[],
  records: ApiRecord[],
): Promise<void> {
  const config = def.lookupConfig ?? def.rollupConfig
  const relation = config ? source.shape.byName.get(config.relationField) : undefined
  if (!config || !relation?.relationConfig) return
  const { target, byId } = await fetchTargets(open, source, relation, rows)
  const targetField = config.targetField ? target?.shape.byName.get(config.targetField) : undefined
  const readable =
    target !== null &&
    (!targetField ||
      shows(targetField.name, { locale: source.locale, projection: null, allowlist: target.scope.fields }))
  rows.forEach((row, i) => {
    const linked = idsOf(source, relation, row)
      .map((id) => byId.get(id))
      .filter((r): r is Row => r !== undefined)
    if (def.lookupConfig) {
      const value =
        readable && targetField && linked[0]
          ? readValue(targetField, linked[0][targetField.name], target!.shape.kind)
          : null
      records[i]![def.name] = value
      return
    }
    const fn = def.rollupConfig!.function
    if (fn === 'count') {
      records[i]![def.name] = target ? linked.length : 0
      return
    }
    const values =
      readable && targetField ? linked.map((r) => readValue(targetField, r[targetField.name], target!.shape.kind)) : []
    records[i]![def.name] = aggregate(fn, values)
  })
}

/** sum and avg over numbers; min and max also over dates (YYYY-MM-DD strings order as dates). */
function aggregate(fn: 'sum' | 'avg' | 'min' | 'max', all: unknown[]): number | string | null {
  const numbers = all.filter((v): v is number => typeof v === 'number')
  if (fn === 'sum') return numbers.reduce((a, v) => a + v, 0)
  if (fn === 'avg') return numbers.length === 0 ? null : numbers.reduce((a, v) => a + v, 0) / numbers.length
  const values = numbers.length > 0 ? numbers : all.filter((v): v is string => typeof v === 'string')
  if (values.length === 0) return null
  return values.reduce((best, v) => ((fn === 'min' ? v < best : v > best) ? v : best))
}
