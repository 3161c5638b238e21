import type { PlanAction } from '../plan/verdicts.js'
import type { InstallRow, ResourceRow } from '../ledger/store.js'

/** An install run as its routes answer it (decision 070): never the document's text or a secret's value. */
export interface Install {
  id: string
  blueprintId: string
  /** The value of the blueprint's namespace parameter: a blueprint is installed once per namespace. */
  namespace: string
  name: string
  version: string
  status: InstallRow['status']
  mode: InstallRow['mode']
  docHash: string
  params: Record<string, unknown>
  /** The secret parameters the install used, by name only. */
  secrets: string[]
  assemblies: string[]
  consent: string[]
  createdBy: string
  createdAt: string
  updatedAt: string
  supersedes: string | null
  supersededBy: string | null
  resources: InstallResource[]
  /** On a two-phase open: the calls the opener makes before settling (secrets as placeholders). */
  actions?: PlanAction[]
}

export interface InstallResource {
  id: string
  brickId: string
  brickKind: string
  resourceKind: string
  verdict: string
  resourceRef: string | null
  status: ResourceRow['status']
  contentHash: string | null
  error: string | null
}

export function presentResource(row: ResourceRow): InstallResource {
  return {
    id: row.id,
    brickId: row.brick_id,
    brickKind: row.brick_kind,
    resourceKind: row.resource_kind,
    verdict: row.verdict,
    resourceRef: row.resource_ref,
    status: row.status,
    contentHash: row.content_hash,
    error: row.error,
  }
}

export function presentInstall(row: InstallRow, resources: readonly ResourceRow[], actions?: PlanAction[]): Install {
  return {
    id: row.id,
    blueprintId: row.blueprint_id,
    namespace: row.namespace,
    name: row.name,
    version: row.version,
    status: row.status,
    mode: row.mode,
    docHash: row.doc_hash,
    params: JSON.parse(row.params_json) as Record<string, unknown>,
    secrets: JSON.parse(row.secrets_json) as string[],
    assemblies: JSON.parse(row.assemblies_json) as string[],
    consent: JSON.parse(row.consent_json) as string[],
    createdBy: row.created_by,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
    supersedes: row.supersedes,
    supersededBy: row.superseded_by,
    resources: resources.map(presentResource),
    ...(actions ? { actions } : {}),
  }
}
