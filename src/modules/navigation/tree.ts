/** Bounds of one project's navigation (docs/navigation.md). */
export const navigationLimits = { maxDepth: 5, maxItems: 500 } as const

/** Where one item sits: its parent (null: top level). */
export interface Placement {
  readonly id: string
  readonly parentId: string | null
}

/** Why a set of placements is not a tree: the item at fault and what is wrong with its parent link. */
export interface PlacementProblem {
  readonly id: string
  readonly reason: 'unknown_parent' | 'cycle' | 'too_deep'
  readonly message: string
}

/**
 * Checks that placements form a forest: every parent exists, no item is its own ancestor, no item sits
 * deeper than `maxDepth` (a top-level item is depth 1). Returns the first problem in list order, or null.
 */
export function checkPlacements(
  items: readonly Placement[],
  maxDepth: number = navigationLimits.maxDepth,
): PlacementProblem | null {
  const parentOf = new Map(items.map((item) => [item.id, item.parentId]))
  // Each item's own link first, so a bad parent is blamed on the item naming it, not on its descendants.
  for (const item of items)
    if (item.parentId !== null && !parentOf.has(item.parentId))
      return {
        id: item.id,
        reason: 'unknown_parent',
        message: `no item "${item.parentId.slice(0, 64)}" in this project`,
      }
  for (const item of items) {
    const seen = new Set([item.id])
    let depth = 1
    let parent = item.parentId
    while (parent !== null) {
      // The repeated item is on the cycle (the item walked from may only lead into it).
      if (seen.has(parent))
        return { id: parent, reason: 'cycle', message: 'the item would be its own ancestor (a cycle)' }
      seen.add(parent)
      depth += 1
      if (depth > maxDepth)
        return { id: item.id, reason: 'too_deep', message: `the item would sit deeper than ${maxDepth} levels` }
      parent = parentOf.get(parent) ?? null
    }
  }
  return null
}
