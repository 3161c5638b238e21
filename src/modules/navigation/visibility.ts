import { isAppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import type { NavigationNode } from './schemas.js'
import type { NavigationRow } from './store.js'
import { navigationLimits } from './tree.js'
import { isTargetKind, navigationTargets, type TargetReach } from './targets.js'

export interface VisibilityDeps {
  access: { decide(principal: Principal, resource: string, action: string): Promise<{ allowed: boolean }> }
  /** The collections of its project the caller may read (throws unauthorized for an anonymous caller that may read none). */
  readableCollections(actor: Principal): Promise<readonly string[]>
  lensExists(projectId: string, id: string): Promise<boolean>
  /** The collection of a view the caller sees (the views service's get, as the caller), else null. */
  viewCollection(actor: Principal, id: string): Promise<string | null>
}

/** The questions a target asks about one caller, each answered once per request. */
export function createReach(deps: VisibilityDeps, actor: Principal): TargetReach {
  const memo = new Map<string, Promise<unknown>>()
  const once = <T>(key: string, load: () => Promise<T>): Promise<T> => {
    if (!memo.has(key)) memo.set(key, load())
    return memo.get(key) as Promise<T>
  }
  return {
    readableCollections: () =>
      once('collections', async () => {
        try {
          return new Set(await deps.readableCollections(actor))
        } catch (err) {
          // Anonymous with nothing readable: no collection item shows, the tree is still answered.
          if (isAppError(err) && err.code === 'unauthorized') return new Set<string>()
          throw err
        }
      }),
    mayRead: (resource) =>
      once(`read:${resource}`, async () => (await deps.access.decide(actor, resource, 'read')).allowed),
    lensExists: (id) => once(`lens:${id}`, () => deps.lensExists(actor.projectId, id)),
    viewCollection: (id) => once(`view:${id}`, () => deps.viewCollection(actor, id)),
  }
}

/** Whether the caller may see this item's own target (its ancestors are not considered). */
export async function targetVisible(row: NavigationRow, reach: TargetReach): Promise<boolean> {
  if (!isTargetKind(row.target_kind)) return false
  return navigationTargets[row.target_kind].visible(row.target_ref, reach)
}

/**
 * The rows the caller sees: those whose target it may read and whose every ancestor it sees too (a parent
 * left out takes its children with it). Order is kept.
 */
export async function visibleRows(rows: readonly NavigationRow[], reach: TargetReach): Promise<NavigationRow[]> {
  const own = await Promise.all(rows.map((row) => targetVisible(row, reach)))
  const byId = new Map(rows.map((row, i) => [row.id, { row, own: own[i] ?? false }]))
  const shown = (row: NavigationRow): boolean => {
    let at: NavigationRow | undefined = row
    // The walk is bounded by the depth limit even if stored links were ever corrupt; a missing parent hides the item.
    for (let step = 0; at && step <= navigationLimits.maxDepth; step++) {
      if (!byId.get(at.id)?.own) return false
      if (at.parent_id === null) return true
      at = byId.get(at.parent_id)?.row
    }
    return false
  }
  return rows.filter(shown)
}

/** Nests visible rows under their parents, each level in the rows' order (sortOrder, then id). */
export function nest(rows: readonly NavigationRow[]): NavigationNode[] {
  const children = new Map<string | null, NavigationNode[]>()
  const nodes = rows.map((row) => ({ row, node: { ...nodeOf(row), children: [] as NavigationNode[] } }))
  for (const { row, node } of nodes) {
    const list = children.get(row.parent_id) ?? []
    list.push(node)
    children.set(row.parent_id, list)
  }
  for (const { node } of nodes) node.children = children.get(node.id) ?? []
  return children.get(null) ?? []
}

function nodeOf(row: NavigationRow): Omit<NavigationNode, 'children'> {
  return {
    id: row.id,
    label: row.label,
    icon: row.icon,
    target: { kind: row.target_kind, ref: row.target_ref },
    parentId: row.parent_id,
    sortOrder: Number(row.sort_order),
  }
}
