/**
 * What a plan knows of the ledger: the blueprint's earlier install in the namespace and the resources it
 * holds (decision 070).
 */
export interface LedgerView {
  /** The earlier install compared against (the blueprint's live run), or null. */
  baseline: { installId: string; version: string; docHash: string } | null
  /** The resource the blueprint holds for each brick id (a created one not yet read back has no ref). */
  rows: ReadonlyMap<string, HeldResource>
  /** The other install holding a resource, by its resource kind and ref; undefined when none does. */
  claimant(resourceKind: string, ref: string): Promise<{ blueprintId: string; namespace: string } | undefined>
}

export interface HeldResource {
  id: string
  brickId: string
  brickKind: string
  ref: string | null
  /** The content hash read back when it was settled (null before). */
  hash: string | null
  /** The compared shape read back when it was settled: how a set (seed records) is read again. */
  canonical: Record<string, unknown> | null
}

/** The resource a brick kind produces, as the ledger names it (claims compare kind and ref). */
export function resourceKindOf(brickKind: string): string {
  return resourceKinds[brickKind] ?? brickKind
}

const resourceKinds: Record<string, string> = {
  access: 'collection_access',
  grants: 'role_grants',
  records: 'record_set',
  attachment: 'lens_attachment',
  nav: 'navigation_item',
  'search-index': 'search_index',
}

/** No ledger: a first install (or a plan of a blueprint never installed). */
export const emptyLedger: LedgerView = {
  baseline: null,
  rows: new Map(),
  claimant: async () => undefined,
}
