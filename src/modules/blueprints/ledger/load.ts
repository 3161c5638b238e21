import type { LedgerStore, ResourceRow } from './store.js'
import type { HeldResource, LedgerView } from './view.js'

/** Rows that still stand for a resource (not let go by an uninstall). */
export const holding = (row: ResourceRow) => row.status !== 'rolled_back' && row.status !== 'detached'

export function heldResource(row: ResourceRow): HeldResource {
  return {
    id: row.id,
    brickId: row.brick_id,
    brickKind: row.brick_kind,
    ref: row.resource_ref,
    hash: row.content_hash,
    canonical: row.canonical_json === null ? null : (JSON.parse(row.canonical_json) as Record<string, unknown>),
  }
}

/** The ledger as a plan of `blueprintId` in the project sees it: its live run and the resources it holds. */
export async function loadLedger(store: LedgerStore, projectId: string, blueprintId: string): Promise<LedgerView> {
  const [current, held] = await Promise.all([store.current(projectId, blueprintId), store.held(projectId, blueprintId)])
  const rows = new Map<string, HeldResource>()
  // Newest last: the row an install took over most recently stands for its brick.
  for (const row of [...held].sort((a, b) => a.updated_at - b.updated_at)) rows.set(row.brick_id, heldResource(row))
  return {
    baseline: current ? { installId: current.id, version: current.version, docHash: current.doc_hash } : null,
    rows,
    claimant: (kind, ref) => store.claimant(projectId, blueprintId, kind, ref),
  }
}
