import {
  FlowOptionsSchema,
  RunAsSchema,
  StepSchema,
  type FlowDefinition,
  type FlowForRun,
  type FlowStatus,
  type Step,
  type TriggerType,
} from '../model.js'
import { maskSteps, maskTriggerConfig } from './masking.js'
import type { FlowWarning } from './preflight.js'
import type { MissingCredential } from './missing-credentials.js'
import type { FlowRow } from './store.js'

/** A flow as the API shows it (automation spec "Flow"); times ISO 8601, options with defaults filled in. */
export interface Flow {
  id: string
  projectId: string
  slug: string
  name: string
  description: string
  icon: string
  color: string
  status: FlowStatus
  triggerType: TriggerType
  triggerConfig: Record<string, unknown>
  operations: Step[]
  options: Record<string, unknown>
  collections: string[]
  createdBy: string | null
  runAs: string
  /** Who made the published version the one that runs; its runs never act beyond them (decision 045). A person's id, `key:<id>`, or null. */
  publishedBy: string | null
  currentVersion: number
  publishedVersion: number | null
  lastRunAt: string | null
  createdAt: string
  updatedAt: string
  runCount: number
  errorCount: number
  /** true for a system-managed flow (read and pause only; runs as the system principal). */
  system: boolean
}

export interface FlowDetail extends Flow {
  publishedOperations: Step[] | null
  webhookEndpoint: { url: string; token: string; methods: string[] } | null
  /** The preflight of the published version (flows/preflight.ts, decision 053): what its runs would likely fail on. */
  warnings: FlowWarning[]
  /** Credentials the draft lacks (step key, or null for the trigger, and path): publishing is refused until they are given. */
  missingCredentials: MissingCredential[]
}

export const iso = (seconds: number): string => new Date(seconds * 1000).toISOString()

// Stored drafts were checked when saved; a later, stricter step schema must not turn a read into a 500.
const stepsOf = (raw: unknown): Step[] => {
  const parsed = StepSchema.array().safeParse(raw)
  return parsed.success ? parsed.data : (raw as Step[])
}

/** The draft stored in a flow row, parsed (options with defaults). */
export function draftOf(row: FlowRow): FlowDefinition {
  return {
    name: row.name,
    triggerType: row.trigger_type as TriggerType,
    triggerConfig: JSON.parse(row.trigger_config) as Record<string, unknown>,
    operations: stepsOf(JSON.parse(row.operations)),
    options: FlowOptionsSchema.parse(JSON.parse(row.options)),
    collections: JSON.parse(row.collections) as string[],
    runAs: RunAsSchema.parse(row.run_as),
  }
}

/** A version snapshot, parsed. */
export function snapshotOf(text: string): FlowDefinition {
  const raw = JSON.parse(text) as Record<string, unknown>
  return {
    name: String(raw.name),
    triggerType: raw.triggerType as TriggerType,
    triggerConfig: (raw.triggerConfig ?? {}) as Record<string, unknown>,
    operations: stepsOf(raw.operations ?? []),
    options: FlowOptionsSchema.parse(raw.options ?? {}),
    collections: (raw.collections ?? ['*']) as string[],
    runAs: RunAsSchema.parse(raw.runAs ?? 'triggering_user'),
  }
}

/** A definition with its credentials masked (or as stored when `reveal`). */
export function shownDefinition(definition: FlowDefinition, reveal: boolean): FlowDefinition {
  if (reveal) return definition
  return {
    ...definition,
    triggerConfig: maskTriggerConfig(definition.triggerType, definition.triggerConfig),
    operations: maskSteps(definition.operations),
  }
}

/** The wire flow; credentials masked unless `reveal` (holders of system/automate:update). */
export function toFlow(row: FlowRow, reveal: boolean): Flow {
  const draft = shownDefinition(draftOf(row), reveal)
  return {
    id: row.id,
    projectId: row.project_id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    icon: row.icon,
    color: row.color,
    status: row.status as FlowStatus,
    triggerType: draft.triggerType,
    triggerConfig: draft.triggerConfig,
    operations: [...draft.operations],
    options: draft.options,
    collections: [...draft.collections],
    createdBy: row.created_by,
    runAs: row.run_as,
    publishedBy: row.published_by,
    currentVersion: row.current_version,
    publishedVersion: row.published_version,
    lastRunAt: row.last_run_at === null ? null : iso(row.last_run_at),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    runCount: row.run_count,
    errorCount: row.error_count,
    system: row.system !== null,
  }
}

/** The flow detail but its warnings: publishedOperations (masked as the rest), for webhook flows the endpoint with its token, and the credentials the draft lacks. */
export function toFlowDetail(
  row: FlowRow,
  published: FlowDefinition | null,
  reveal: boolean,
  publicUrl: string,
  missingCredentials: MissingCredential[],
): Omit<FlowDetail, 'warnings'> {
  const flow = toFlow(row, reveal)
  const webhookEndpoint =
    row.trigger_type === 'webhook'
      ? {
          url: `${publicUrl.replace(/\/+$/, '')}/api/v1/automate/webhook/${row.webhook_token}`,
          token: row.webhook_token,
          methods: ((flow.triggerConfig.allowed_methods as string[] | undefined) ?? ['POST']).slice(),
        }
      : null
  return {
    ...flow,
    publishedOperations: published ? [...shownDefinition(published, reveal).operations] : null,
    webhookEndpoint,
    missingCredentials,
  }
}

/** A flow as runs and triggers read it: real values, the published definition parsed. */
export function toFlowForRun(row: FlowRow, publishedSnapshot: string | null): FlowForRun {
  return {
    id: row.id,
    projectId: row.project_id,
    slug: row.slug,
    name: row.name,
    status: row.status as FlowStatus,
    triggerType: row.trigger_type as TriggerType,
    createdBy: row.created_by,
    webhookToken: row.webhook_token,
    publishedVersion: row.published_version,
    publishedBy: row.published_by,
    published: publishedSnapshot === null ? null : snapshotOf(publishedSnapshot),
    draft: draftOf(row),
    system: row.system !== null,
  }
}
