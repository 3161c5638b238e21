import { client, problemOf, type Problem } from '../api.js'
import type { JsonSchema } from './schema-form.js'

/**
 * The automation API as the flow screens use it (docs/automation.md): flows, versions, the operations
 * catalog, quotas. Runs go through the SDK's `client.flows`. Shapes are kept loose on purpose: the editor
 * holds configs as plain JSON.
 */
export const automate = '/api/v1/automate'
const enc = encodeURIComponent

export type TriggerType =
  | 'manual'
  | 'webhook'
  | 'schedule'
  | 'event_action'
  | 'event_filter'
  | 'api_endpoint'
  | 'another_flow'
  | 'app_event'

export const triggerTypes: readonly { type: TriggerType; label: string }[] = [
  { type: 'manual', label: 'Manual' },
  { type: 'webhook', label: 'Webhook' },
  { type: 'schedule', label: 'Schedule' },
  { type: 'event_action', label: 'Record event (after the write)' },
  { type: 'event_filter', label: 'Record event (before the write, blocking)' },
  { type: 'api_endpoint', label: 'API endpoint' },
  { type: 'app_event', label: 'App event' },
  { type: 'another_flow', label: 'Another flow' },
]

export const triggerLabel = (type: string) => triggerTypes.find((t) => t.type === type)?.label ?? type

/** A trigger config the server accepts on create, for each type (the editor refines it). */
export function starterTriggerConfig(type: TriggerType): Record<string, unknown> {
  switch (type) {
    case 'schedule':
      return { cron: '0 8 * * *', timezone: 'UTC' }
    case 'event_action':
    case 'event_filter':
      return { events: ['record.create'] }
    case 'app_event':
      return { events: ['user.login'] }
    default:
      return {}
  }
}

export interface Step {
  key: string
  type: string
  config: Record<string, unknown>
  condition?: unknown
  onError?: 'stop' | 'continue' | 'retry' | 'fallback'
  retryConfig?: Record<string, unknown>
  fallbackValue?: unknown
}

export interface Flow {
  id: string
  name: string
  description: string
  status: 'draft' | 'active' | 'inactive'
  triggerType: TriggerType
  triggerConfig: Record<string, unknown>
  operations: Step[]
  options: Record<string, unknown>
  collections: string[]
  runAs: string
  currentVersion: number
  publishedVersion: number | null
  lastRunAt: string | null
  runCount: number
  errorCount: number
  system?: boolean
  updatedAt: string
}

export interface FlowWarning {
  code: string
  step: string
  message: string
  fix: string
}

export interface FlowDetail extends Flow {
  publishedOperations: Step[] | null
  webhookEndpoint: { url: string; token: string; methods: string[] } | null
  warnings: FlowWarning[]
  missingCredentials: { step: string | null; path: string }[]
}

export interface VersionSummary {
  version: number
  changeSummary: string
  createdAt: string
  createdBy: string | null
}

export interface OperationInfo {
  type: string
  name: string
  category: string
  description: string
  system: boolean
}

export interface OperationSchema extends OperationInfo {
  schema: JsonSchema
}

export interface Quotas {
  limits: Record<string, number>
  usage: Record<string, number>
}

export const flowsApi = {
  async list() {
    return (await client.transport.request<{ data: Flow[] }>('GET', `${automate}/flows`)).data
  },
  async get(id: string) {
    return (await client.transport.request<{ data: FlowDetail }>('GET', `${automate}/flows/${enc(id)}`)).data
  },
  async create(body: { name: string; triggerType: TriggerType; triggerConfig: unknown; operations: Step[] }) {
    return (await client.transport.request<{ data: FlowDetail }>('POST', `${automate}/flows`, { body })).data
  },
  async patch(id: string, body: Record<string, unknown>) {
    return (await client.transport.request<{ data: FlowDetail }>('PATCH', `${automate}/flows/${enc(id)}`, { body }))
      .data
  },
  async duplicate(id: string) {
    return (
      await client.transport.request<{ data: FlowDetail }>('POST', `${automate}/flows/${enc(id)}/duplicate`, {
        body: {},
      })
    ).data
  },
  async remove(id: string) {
    await client.transport.request('DELETE', `${automate}/flows/${enc(id)}`)
  },
  async publish(id: string, changeSummary: string) {
    return (
      await client.transport.request<{ data: { version: number; warnings: FlowWarning[] } }>(
        'POST',
        `${automate}/flows/${enc(id)}/publish`,
        { body: changeSummary ? { changeSummary } : {} },
      )
    ).data
  },
  async setStatus(id: string, status: Flow['status']) {
    return (
      await client.transport.request<{ data: FlowDetail }>('PATCH', `${automate}/flows/${enc(id)}/status`, {
        body: { status },
      })
    ).data
  },
  async versions(id: string) {
    return (await client.transport.request<{ data: VersionSummary[] }>('GET', `${automate}/flows/${enc(id)}/versions`))
      .data
  },
  async version(id: string, version: number) {
    return (
      await client.transport.request<{ data: VersionSummary & { snapshot: Record<string, unknown> } }>(
        'GET',
        `${automate}/flows/${enc(id)}/versions/${version}`,
      )
    ).data
  },
  async rollback(id: string, version: number) {
    return (
      await client.transport.request<{ data: FlowDetail }>('POST', `${automate}/flows/${enc(id)}/rollback/${version}`)
    ).data
  },
  /** The manual trigger's own entry (checks the published input fields and confirmation). */
  async trigger(id: string, body: { input?: Record<string, unknown>; confirmed?: boolean }) {
    return (
      await client.transport.request<{ data: { runId: string } }>('POST', `${automate}/flows/${enc(id)}/trigger`, {
        body,
      })
    ).data
  },
  /** The roles the caller may delegate runs to (empty without system/automate:manage). */
  async assignableRoles() {
    return (
      await client.transport.request<{ data: { id: string; name: string; runAs: string }[] }>(
        'GET',
        `${automate}/assignable-roles`,
      )
    ).data
  },
  async quotas() {
    return (await client.transport.request<{ data: Quotas }>('GET', `${automate}/quotas`)).data
  },
}

let catalog: Promise<OperationInfo[]> | null = null
/** The operations catalog (GET /operations), fetched once per page load; system operations left out. */
export function operationsCatalog(): Promise<OperationInfo[]> {
  catalog ??= client.transport
    .request<{ data: OperationInfo[] }>('GET', `${automate}/operations`)
    .then((r) => r.data.filter((op) => !op.system))
  catalog.catch(() => {
    catalog = null
  })
  return catalog
}

const schemas = new Map<string, Promise<OperationSchema>>()
/** One operation's config JSON Schema (GET /operations/:type), fetched once per type. */
export function operationSchema(type: string): Promise<OperationSchema> {
  let found = schemas.get(type)
  if (!found) {
    found = client.transport
      .request<{ data: OperationSchema }>('GET', `${automate}/operations/${enc(type)}`)
      .then((r) => r.data)
    found.catch(() => schemas.delete(type))
    schemas.set(type, found)
  }
  return found
}

let openapi: Promise<{ components?: { schemas?: Record<string, JsonSchema> } }> | null = null
let triggers: Promise<{ data: { type: string; schema: JsonSchema }[] }> | null = null

/** A trigger type's config schema: GET /api/v1/automate/triggers (the same schema the save checks). */
export async function triggerSchema(type: string): Promise<JsonSchema | null> {
  triggers ??= client.transport.request('GET', '/api/v1/automate/triggers')
  triggers.catch(() => {
    triggers = null
  })
  return (await triggers).data.find((t) => t.type === type)?.schema ?? null
}

/** The flow options' schema, from the same document (the options of a create body). */
export async function optionsSchema(): Promise<JsonSchema | null> {
  openapi ??= client.transport.request('GET', '/api/openapi.json')
  const doc = await openapi
  const create = doc.components?.schemas?.FlowCreateManual
  return create?.properties?.options ?? null
}

/** A refusal of a flow save, with where it points: `operations[1].config.message` → step 1, `message`. */
export interface FlowProblem extends Problem {
  /** The failing path as the server wrote it (details.path or the first issue's path). */
  path?: string | undefined
  /** Every issue the server listed (`details.issues`), with its path. */
  issues: { path: string; message: string }[]
}

export function flowProblemOf(err: unknown): FlowProblem {
  const problem = problemOf(err)
  const details = (err as { details?: unknown })?.details
  let path: string | undefined
  let issues: { path: string; message: string }[] = []
  if (details && typeof details === 'object') {
    const listed = (details as { issues?: unknown }).issues
    if (Array.isArray(listed))
      issues = listed.filter(
        (i): i is { path: string; message: string } =>
          !!i &&
          typeof (i as { path?: unknown }).path === 'string' &&
          typeof (i as { message?: unknown }).message === 'string',
      )
    const d = details as { path?: unknown; field?: unknown; issues?: unknown }
    if (typeof d.path === 'string') path = d.path
    else if (Array.isArray(d.issues) && d.issues[0] && typeof (d.issues[0] as { path?: unknown }).path === 'string')
      path = (d.issues[0] as { path: string }).path
    else if (typeof d.field === 'string') path = d.field
  }
  return { ...problem, field: problem.field ?? path, path, issues }
}

/** Splits a server path into where it belongs in the editor. */
export function locate(
  path: string | undefined,
):
  | { kind: 'step'; index: number; config: string | null; rest: string }
  | { kind: 'trigger'; config: string }
  | { kind: 'flow'; field: string }
  | null {
  if (!path) return null
  const step = /^operations\[(\d+)\](?:\.(.*))?$/.exec(path)
  if (step) {
    const rest = step[2] ?? ''
    const config = rest === 'config' ? '' : rest.startsWith('config.') ? rest.slice('config.'.length) : null
    return { kind: 'step', index: Number(step[1]), config, rest }
  }
  if (path.startsWith('triggerConfig')) return { kind: 'trigger', config: path.replace(/^triggerConfig\.?/, '') }
  return { kind: 'flow', field: path }
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—')

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—'
  if (ms < 1000) return `${ms} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`
}

/** JSON for reading: pretty, and a placeholder for nothing. */
export const pretty = (value: unknown) => (value === undefined ? '—' : JSON.stringify(value, null, 2))
