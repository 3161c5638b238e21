import type { ParamDecl } from '../document/params.js'
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

/** The ledger as a plan of `blueprintId` in a namespace sees it: its live run and the resources it holds. */
export async function loadLedger(
  store: LedgerStore,
  projectId: string,
  blueprintId: string,
  namespace: string,
): Promise<LedgerView> {
  const [current, held] = await Promise.all([
    store.current(projectId, blueprintId, namespace),
    store.held(projectId, blueprintId, namespace),
  ])
  const rows = new Map<string, HeldResource>()
  // Newest last: the row an install took over most recently stands for its brick.
  for (const row of [...held].sort((a, b) => a.updated_at - b.updated_at)) rows.set(row.brick_id, heldResource(row))
  return {
    baseline: current ? { installId: current.id, version: current.version, docHash: current.doc_hash } : null,
    rows,
    claimant: (kind, ref) => store.claimant(projectId, blueprintId, namespace, kind, ref),
  }
}

/** The value of a document's namespace parameter in a plan or install: given, else its default. */
export function namespaceOf(params: readonly ParamDecl[], values: Readonly<Record<string, unknown>>): string {
  const param = params.find((p) => p.namespace)
  if (!param) return ''
  const value = Object.hasOwn(values, param.name) ? values[param.name] : param.default
  return value === undefined || value === null ? '' : String(value)
}
