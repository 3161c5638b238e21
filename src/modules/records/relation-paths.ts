import { sql, type Expression, type SqlBool } from 'kysely'
import { AppError, isAppError } from '../../lib/errors.js'
import {
  parseFilter,
  type FieldPath,
  type FieldResolver,
  type FilterNode,
  type ResolvedField,
} from '../../lib/filter/index.js'
import { usersTarget, type FieldDef } from '../collections/index.js'
import { alwaysReadable } from './codec.js'
import type { Opened, Opener } from './context.js'
import { openTarget } from './expand.js'
import { withFieldValues } from './filter-values.js'
import { followUsers, loadUsersInFilter, type UsersInFilter } from './user-paths.js'

/** How many belongsTo relations one filter path may follow (`a.b.c.field`: three). */
export const relationPathLimits = { hops: 3 } as const

/**
 * The collections a filter's paths lead to, opened for the caller's read (null where the caller may not read
 * one), and the project's users when a path leads to them (decision 061; null: the caller sees no profiles).
 */
interface Targets {
  readonly collections: Map<string, Opened | null>
  users?: UsersInFilter | null
}

/**
 * The caller's collection with a request resolver that also follows dotted paths through belongsTo
 * relations (`assignee.name`, decision 059): each hop is an EXISTS over the target's rows within the
 * caller's row rules there, and a path through a collection, a relation or a field the caller may not read
 * matches nothing, as through a null relation. The targets are opened here (it is asynchronous); the
 * resolver then answers synchronously, as the compiler needs. Throws what parsing the filter throws.
 */
export async function withRelationPaths(
  open: Opener,
  opened: Opened,
  ...raws: (string | undefined)[]
): Promise<Opened> {
  // A relation path has a dot (or an escape spelling one); most filters have none and skip a second parse.
  const texts = raws.filter((raw): raw is string => raw !== undefined && (raw.includes('.') || raw.includes('\\u')))
  if (texts.length === 0) return opened
  const targets: Targets = { collections: new Map() }
  for (const raw of texts)
    for (const path of fieldPaths(parseFilter(raw))) await openAlong(open, opened, path, 0, targets)
  if (targets.collections.size === 0 && targets.users === undefined) return opened
  return { ...opened, requestResolver: relationResolver(opened, targets) }
}

/** Every field path a filter names; the parser has bounded the tree, so the recursion is shallow. */
function fieldPaths(node: FilterNode): FieldPath[] {
  if (node.kind === 'compare') return [node.field]
  return node.items.flatMap(fieldPaths)
}

/** The belongsTo relation field a path steps through first, or null when it names a field of `at` itself. */
function hopOf(at: Opened, path: FieldPath): FieldDef | null {
  const [head, ...rest] = path
  const def = at.shape.byName.get(head)
  if (rest.length === 0 || def?.type !== 'relation' || def.relationConfig?.relationType !== 'belongsTo') return null
  return def
}

async function openAlong(
  open: Opener,
  at: Opened,
  path: FieldPath,
  hops: number,
  targets: Targets,
  whole: FieldPath = path,
): Promise<void> {
  const def = hopOf(at, path)
  // Past the last allowed hop nothing is opened: the resolver refuses the path.
  if (!def || hops >= relationPathLimits.hops) return
  const name = def.relationConfig!.targetCollection
  if (name === usersTarget) {
    if (targets.users === undefined) targets.users = await loadUsersInFilter(at, `filter.${whole.join('.')}`)
    return
  }
  if (!targets.collections.has(name)) targets.collections.set(name, await openTarget(open, at, name))
  const target = targets.collections.get(name)
  const [, ...rest] = path
  if (target && rest.length > 0) await openAlong(open, target, rest as unknown as FieldPath, hops + 1, targets, whole)
}

/** Every comparison on it is false: a path through something the caller may not read. */
const nothing: ResolvedField = Object.freeze({ column: 'id', jsonPath: [], type: 'json', through: false })

function relationResolver(source: Opened, targets: Targets): FieldResolver {
  return {
    resolve(path: FieldPath): ResolvedField {
      const def = hopOf(source, path)
      if (!def) return source.requestResolver.resolve(path)
      // The relation field itself is a field of the caller's own collection: 403 outside its allowlist, as any.
      source.requestResolver.resolve([def.name])
      return follow(source, def, path.slice(1), { hops: 1, outer: source.collection.name, path, targets })
    },
  }
}

interface Step {
  /** Relations followed so far, this one included. */
  readonly hops: number
  /** The table (or alias) the relation column is read from. */
  readonly outer: string
  /** The whole path, for messages. */
  readonly path: FieldPath
  readonly targets: Targets
}

/** The field at the end of `rest`, reached from `from` through its relation `def`. Throws invalid_request. */
function follow(from: Opened, def: FieldDef, rest: readonly string[], step: Step): ResolvedField {
  const where = `filter.${step.path.join('.')}`
  if (step.hops > relationPathLimits.hops) {
    throw new AppError('invalid_request', `${where}: a filter follows at most ${relationPathLimits.hops} relations`, {
      field: step.path.join('.'),
    })
  }
  if (def.relationConfig!.targetCollection === usersTarget)
    return followUsers(step.targets.users ?? null, def.name, rest, { hops: step.hops, outer: step.outer, where })
  const target = step.targets.collections.get(def.relationConfig!.targetCollection) ?? null
  if (!target) return nothing
  // One statement reaches one database: a target elsewhere cannot be joined (said only to a caller who may read it).
  if (target.handle !== from.handle) {
    throw new AppError(
      'invalid_request',
      `${where}: ${def.name} leads to ${target.collection.name} (${target.collection.storageType}), which is in ` +
        `another database than ${from.collection.name} (${from.collection.storageType}); a filter follows ` +
        'relations only within one database',
      { field: step.path.join('.') },
    )
  }
  const alias = `__via${step.hops}`
  const fields = rest as unknown as FieldPath
  const next = hopOf(target, fields)
  let inner: ResolvedField
  if (next) {
    if (!readable(target, next.name)) return nothing
    inner = follow(target, next, rest.slice(1), { ...step, hops: step.hops + 1, outer: alias })
  } else {
    if (!readable(target, fields[0])) return nothing
    // The target's own resolver: its schema decides (unknown field, computed field, a path into a non-JSON field).
    const resolved = resolveIn(target, fields, where)
    inner = { ...resolved, column: `${alias}.${resolved.column}` }
  }
  if (inner.through === false) return nothing
  const deeper = inner.through
  let rows = target.store.selectFrom().selectAll()
  for (const condition of target.store.where(target.scope.rows, false)) rows = rows.where(condition)
  const key = sql.ref(`${step.outer}.${def.name}`)
  return Object.freeze({
    ...inner,
    // The target's rows within its row rules, as a derived table under an alias of its own, so that a
    // relation to the same collection still tells the outer row from the related one.
    through: (condition: Expression<SqlBool>) =>
      sql<SqlBool>`exists (select 1 from (${rows}) as ${sql.id(alias)} where ${sql.ref(`${alias}.id`)} = ${key} and ${deeper ? deeper(condition) : condition})`,
  })
}

/** A field of the target by its own resolver; its refusals name the whole path. Throws invalid_request. */
function resolveIn(target: Opened, fields: FieldPath, where: string): ResolvedField {
  try {
    return withFieldValues(target.resolver, target.collection.fields).resolve(fields)
  } catch (err) {
    if (!isAppError(err) || err.code !== 'invalid_request') throw err
    throw new AppError('invalid_request', `${where}: in ${target.collection.name}, ${err.message}`, err.details)
  }
}

/** Whether the caller's grants on the collection let it read the field. */
function readable(target: Opened, field: string | undefined): boolean {
  if (field === undefined) return false
  // An unknown field is left to the target's resolver, which refuses it: the caller may read that schema.
  if (!target.shape.byName.has(field)) return true
  return alwaysReadable.has(field) || !target.scope.fields || target.scope.fields.includes(field)
}
