/**
 * What a navigation item may point at, one registry entry per kind: how its ref is checked when saved, and
 * whether a caller may see it in the tree (decision 064). An entry answers through a per-request `TargetReach`
 * so a tree of 500 items asks each question once.
 */
export interface TargetReach {
  /** Names of the collections the caller may read (collections/<name>:read, schema read or the public preset). */
  readableCollections(): Promise<ReadonlySet<string>>
  /** Whether the caller holds `resource:read`. */
  mayRead(resource: string): Promise<boolean>
  /** Whether a lens with this id exists in the caller's project. */
  lensExists(id: string): Promise<boolean>
  /** The collection of a saved view the caller sees (shared, or its own), else null. */
  viewCollection(id: string): Promise<string | null>
}

interface TargetKind {
  /** Why the ref cannot be saved, or null. */
  refProblem(ref: string): string | null
  visible(ref: string, reach: TargetReach): Promise<boolean>
}

const plainRef = (ref: string) =>
  ref.length < 1 || ref.length > 200 || /[\s\p{Cc}]/u.test(ref) ? 'must be 1 to 200 characters, no spaces' : null

/**
 * An absolute http(s) URL without credentials. Whitespace and control characters are refused outright:
 * URL parsers (and browsers) drop tabs and newlines, so `java\tscript:` would otherwise be read as a scheme.
 */
export function urlProblem(ref: string): string | null {
  if (ref.length < 1 || ref.length > 2000) return 'must be 1 to 2000 characters'
  if (/[\s\p{Cc}]/u.test(ref)) return 'must hold no spaces or control characters'
  let url: URL
  try {
    url = new URL(ref)
  } catch {
    return 'must be an absolute http or https URL'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL'
  if (url.username !== '' || url.password !== '') return 'must not hold a user name or password'
  return null
}

export const navigationTargets = {
  collection: {
    refProblem: plainRef,
    visible: async (ref, reach) => (await reach.readableCollections()).has(ref),
  },
  lens: {
    refProblem: plainRef,
    visible: async (ref, reach) => (await reach.mayRead('system/lenses')) && (await reach.lensExists(ref)),
  },
  flow: {
    refProblem: plainRef,
    visible: (_ref, reach) => reach.mayRead('system/automate'),
  },
  // A view the caller sees (the views module decides: shared ones and their own) over a collection it may read.
  view: {
    refProblem: plainRef,
    visible: async (ref, reach) => {
      const collection = await reach.viewCollection(ref)
      return collection !== null && (await reach.readableCollections()).has(collection)
    },
  },
  url: {
    refProblem: urlProblem,
    visible: async () => true,
  },
} satisfies Record<string, TargetKind>

export type NavigationTargetKind = keyof typeof navigationTargets
export const navigationTargetKinds = Object.keys(navigationTargets) as NavigationTargetKind[]

export function isTargetKind(kind: string): kind is NavigationTargetKind {
  return Object.hasOwn(navigationTargets, kind)
}
