import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import type { DbKind } from '../../lib/db/index.js'
import { AppError } from '../../lib/errors.js'
import { resourcePublisher, type EventBus, type ResourceEvents } from '../../lib/events/index.js'
import { newId } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import { checkOrder } from './order.js'
import type {
  CreateNavigationItemInput,
  NavigationItem,
  NavigationNode,
  NavigationOrderInput,
  UpdateNavigationItemInput,
} from './schemas.js'
import { createNavigationStore, type NavigationChanges, type NavigationRow } from './store.js'
import { isTargetKind, navigationTargets } from './targets.js'
import { checkPlacements, navigationLimits } from './tree.js'
import { createReach, nest, visibleRows, type VisibilityDeps } from './visibility.js'

export interface NavigationDeps extends Omit<VisibilityDeps, 'access'> {
  systemDb: Kysely<any>
  dbKind: DbKind
  clock: Clock
  access: Pick<AccessService, 'authorize' | 'decide'>
  audit: Pick<AuditService, 'record'>
  /** navigation.create, navigation.update (a reorder: one per item it moved), navigation.delete (docs/events.md). */
  events: EventBus<NavigationEvents>
}

export type NavigationEvents = ResourceEvents<'navigation', NavigationItem>

export const NAVIGATION_RESOURCE = 'system/navigation'
const notFound = () => new AppError('not_found', 'Navigation item not found')

/** Throws validation_error naming target.kind or target.ref. */
function checkTarget(target: { kind: string; ref: string }): void {
  if (!isTargetKind(target.kind))
    throw new AppError('validation_error', `target.kind: must be one of ${Object.keys(navigationTargets).join(', ')}`, {
      at: 'target.kind',
    })
  const problem = navigationTargets[target.kind].refProblem(target.ref)
  if (problem) throw new AppError('validation_error', `target.ref: ${problem}`, { at: 'target.ref' })
}

/** Throws validation_error at `at` when the rows, as they would be, are not a tree within the depth limit. */
function checkTree(rows: readonly NavigationRow[], at: (id: string) => string): void {
  const problem = checkPlacements(rows.map((row) => ({ id: row.id, parentId: row.parent_id })))
  if (problem)
    throw new AppError('validation_error', `${at(problem.id)}: ${problem.message}`, {
      at: at(problem.id),
      reason: problem.reason,
    })
}

function itemOf(row: NavigationRow): NavigationItem {
  return {
    id: row.id,
    label: row.label,
    icon: row.icon,
    target: { kind: row.target_kind, ref: row.target_ref },
    parentId: row.parent_id,
    sortOrder: Number(row.sort_order),
    createdBy: row.created_by,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  }
}

/**
 * The navigation tree (docs/navigation.md, decision 064): the project's shared menu under system/navigation.
 * Every write holds the project's lock and checks the whole tree as it would be (parents exist, no cycle,
 * depth, count) before changing anything.
 */
export function createNavigationService(deps: NavigationDeps) {
  const store = createNavigationStore(deps.systemDb, deps.dbKind)
  const may = (actor: Principal, action: 'read' | 'create' | 'update' | 'delete') =>
    deps.access.authorize(actor, `${NAVIGATION_RESOURCE}:${action}`)
  const publish = resourcePublisher(deps.events, 'navigation', deps.clock)
  const audit = (
    actor: Principal,
    action: 'created' | 'updated' | 'deleted' | 'reordered',
    id: string | null,
    details: Record<string, unknown>,
  ) =>
    deps.audit.record({
      projectId: actor.projectId,
      action: `navigation.${action}`,
      actor,
      target: { type: 'navigation_item', id },
      details,
    })

  /**
   * What the caller sees of the admin list: everything with system/navigation:update (it edits the menu),
   * else the items its tree would show (an item never tells a reader about a target it may not read).
   */
  async function seenBy(actor: Principal, rows: NavigationRow[]): Promise<NavigationRow[]> {
    if ((await deps.access.decide(actor, `${NAVIGATION_RESOURCE}`, 'update')).allowed) return rows
    return visibleRows(rows, createReach(deps, actor))
  }

  return {
    /** The caller's tree: items whose target it may not read are left out, with their children. Throws unauthorized, forbidden. */
    async tree(actor: Principal): Promise<NavigationNode[]> {
      await may(actor, 'read')
      return nest(await visibleRows(await store.all(actor.projectId), createReach(deps, actor)))
    },

    /** A page of the items the caller sees, flat, by sortOrder. Throws unauthorized, forbidden. */
    async list(actor: Principal, page: number, limit: number): Promise<{ data: NavigationItem[]; total: number }> {
      await may(actor, 'read')
      const seen = await seenBy(actor, await store.all(actor.projectId))
      return { data: seen.slice((page - 1) * limit, page * limit).map(itemOf), total: seen.length }
    },

    /** One item. Throws forbidden, not_found (another project's, or one the caller does not see). */
    async get(actor: Principal, id: string): Promise<NavigationItem> {
      await may(actor, 'read')
      const rows = await store.all(actor.projectId)
      const row = (await seenBy(actor, rows)).find((r) => r.id === id)
      if (!row) throw notFound()
      return itemOf(row)
    },

    /** Adds an item (after its last sibling unless sortOrder is given). Throws forbidden, validation_error, conflict (count). */
    async create(actor: Principal, input: CreateNavigationItemInput): Promise<NavigationItem> {
      await may(actor, 'create')
      checkTarget(input.target)
      const row = await store.write(actor.projectId, async (w) => {
        const rows = await w.all()
        if (rows.length >= navigationLimits.maxItems)
          throw new AppError('conflict', `A project holds at most ${navigationLimits.maxItems} navigation items`, {
            items: rows.length,
            max: navigationLimits.maxItems,
          })
        const siblings = rows.filter((r) => r.parent_id === input.parentId)
        const now = deps.clock.seconds()
        const created: NavigationRow = {
          id: newId(),
          project_id: actor.projectId,
          label: input.label,
          icon: input.icon,
          target_kind: input.target.kind,
          target_ref: input.target.ref,
          parent_id: input.parentId,
          sort_order: input.sortOrder ?? Math.max(-1, ...siblings.map((r) => Number(r.sort_order))) + 1,
          created_by: actor.userId,
          created_at: now,
          updated_at: now,
        }
        checkTree([...rows, created], () => 'parentId')
        await w.insert(created)
        return created
      })
      await audit(actor, 'created', row.id, { label: row.label, target: row.target_kind })
      const item = itemOf(row)
      publish(actor, row.id, null, item)
      return item
    },

    /** Changes an item; a new parentId moves it with its children. Throws forbidden, not_found, validation_error. */
    async update(actor: Principal, id: string, input: UpdateNavigationItemInput): Promise<NavigationItem> {
      await may(actor, 'update')
      if (input.target) checkTarget(input.target)
      const changes: NavigationChanges = {}
      if (input.label !== undefined) changes.label = input.label
      if (input.icon !== undefined) changes.icon = input.icon
      if (input.target) Object.assign(changes, { target_kind: input.target.kind, target_ref: input.target.ref })
      if (input.parentId !== undefined) changes.parent_id = input.parentId
      if (input.sortOrder !== undefined) changes.sort_order = input.sortOrder
      let previous: NavigationRow | undefined
      const row = await store.write(actor.projectId, async (w) => {
        const rows = await w.all()
        const before = rows.find((r) => r.id === id)
        if (!before) throw notFound()
        previous = before
        if (Object.keys(changes).length === 0) return before
        const after = { ...before, ...changes, updated_at: deps.clock.seconds() }
        checkTree(
          rows.map((r) => (r.id === id ? after : r)),
          () => 'parentId',
        )
        await w.update(id, { ...changes, updated_at: after.updated_at })
        return after
      })
      if (Object.keys(changes).length === 0) return itemOf(row)
      await audit(actor, 'updated', id, { changed: Object.keys(input) })
      const item = itemOf(row)
      if (previous) publish(actor, id, itemOf(previous), item)
      return item
    },

    /** Deletes a leaf item. Throws forbidden, not_found, conflict (it has children; counted in details). */
    async delete(actor: Principal, id: string): Promise<void> {
      await may(actor, 'delete')
      const row = await store.write(actor.projectId, async (w) => {
        const rows = await w.all()
        const found = rows.find((r) => r.id === id)
        if (!found) throw notFound()
        const children = rows.filter((r) => r.parent_id === id).length
        if (children > 0)
          throw new AppError('conflict', 'This item has children: move or delete them first', { children })
        await w.delete(id)
        return found
      })
      await audit(actor, 'deleted', id, { label: row.label })
      publish(actor, id, itemOf(row), null)
    },

    /**
     * Places every item at once (the full list of { id, parentId, sortOrder }), in one transaction: a list
     * that is not the project's items each once, or not a tree within the depth limit, changes nothing.
     * Throws forbidden (system/navigation:update), validation_error naming items[i].
     */
    async reorder(actor: Principal, input: NavigationOrderInput): Promise<NavigationItem[]> {
      await may(actor, 'update')
      const moved: [before: NavigationRow, after: NavigationRow][] = []
      const rows = await store.write(actor.projectId, async (w) => {
        const current = await w.all()
        moved.length = 0
        checkOrder(current, input.items)
        const index = new Map(input.items.map((item, i) => [item.id, i]))
        const now = deps.clock.seconds()
        const next = current.map((row) => {
          const placed = input.items[index.get(row.id) ?? -1]
          return placed ? { ...row, parent_id: placed.parentId, sort_order: placed.sortOrder } : row
        })
        checkTree(next, (id) => `items[${index.get(id)}].parentId`)
        for (const [i, row] of next.entries()) {
          const was = current[i]
          if (was && (was.parent_id !== row.parent_id || Number(was.sort_order) !== row.sort_order)) {
            await w.update(row.id, { parent_id: row.parent_id, sort_order: row.sort_order, updated_at: now })
            moved.push([was, { ...row, updated_at: now }])
          }
        }
        return next
          .map((row) => ({ ...row, updated_at: now }))
          .sort((a, b) => Number(a.sort_order) - Number(b.sort_order) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      })
      await audit(actor, 'reordered', null, { items: rows.length })
      for (const [before, after] of moved) publish(actor, after.id, itemOf(before), itemOf(after))
      return rows.map(itemOf)
    },

    store,
  }
}

export type NavigationService = ReturnType<typeof createNavigationService>
