import pino from 'pino'
import { createManualClock } from '../../../lib/clock-manual.js'
import { createEventBus } from '../../../lib/events/index.js'
import type { Principal } from '../../../lib/principal.js'
import { createMemoryQueue } from '../../../lib/queue/index.js'
import { createWriteHooks } from '../../records/index.js'
import {
  defaultFlowOptions,
  type FlowDefinition,
  type FlowForRun,
  type FlowLookup,
  type RunOutcome,
  type RunStarter,
  type TriggerInput,
  type TriggerType,
} from '../model.js'
import type { TriggerDeps, TriggerEvents } from './define-trigger.js'

// Test doubles of the flows service and the run engine (the seams of model.ts), owned by the triggers'
// tests: a flow store that tells its listeners about every change, and a run starter that records calls.

let counter = 0

/** A flow as the lookup hands it out: active and published on `triggerType` unless said otherwise. */
export function makeFlow(
  triggerType: TriggerType,
  triggerConfig: Record<string, unknown>,
  more: {
    id?: string
    projectId?: string
    status?: FlowForRun['status']
    collections?: string[]
    published?: boolean
    createdBy?: string | null
  } = {},
): FlowForRun {
  const definition: FlowDefinition = {
    name: 'a flow',
    triggerType,
    triggerConfig,
    operations: [],
    options: { ...defaultFlowOptions },
    collections: more.collections ?? ['*'],
    runAs: 'triggering_user',
  }
  const id = more.id ?? `flow${++counter}`
  return {
    id,
    projectId: more.projectId ?? 'p1',
    slug: id,
    name: 'a flow',
    status: more.status ?? 'active',
    triggerType,
    createdBy: more.createdBy ?? 'u-owner',
    webhookToken: `token-${id}`,
    publishedVersion: more.published === false ? null : 1,
    published: more.published === false ? null : definition,
    draft: definition,
  }
}

export type FlowListener = Parameters<FlowLookup['changes']['add']>[0]

/** An in-memory FlowLookup; `put` and `remove` tell the change listeners, as the flows service does after a write. */
export function createFakeFlows(initial: FlowForRun[] = []) {
  const flows = new Map(initial.map((flow) => [flow.id, flow]))
  const listeners = new Set<FlowListener>()
  const lookups = { activeByTrigger: 0 }
  const lookup: FlowLookup = {
    byId: async (projectId, flowId) => {
      const flow = flows.get(flowId)
      return flow && flow.projectId === projectId ? flow : null
    },
    byWebhookToken: async (token) => [...flows.values()].find((flow) => flow.webhookToken === token) ?? null,
    // One version per flow here: its published one.
    version: async (projectId, flowId, version) => {
      const flow = flows.get(flowId)
      return flow && flow.projectId === projectId && flow.publishedVersion === version ? flow.published : null
    },
    activeByTrigger: async (projectId, type) => {
      lookups.activeByTrigger++
      return [...flows.values()].filter(
        (flow) => flow.projectId === projectId && flow.status === 'active' && flow.published?.triggerType === type,
      )
    },
    activeByTriggerAcrossProjects: async (type) =>
      [...flows.values()].filter((flow) => flow.status === 'active' && flow.published?.triggerType === type),
    countRun: async () => {},
    changes: {
      add(listener) {
        listeners.add(listener)
        return () => void listeners.delete(listener)
      },
    },
  }
  return {
    lookup,
    lookups,
    async put(flow: FlowForRun) {
      flows.set(flow.id, flow)
      for (const listener of listeners) await listener(flow.projectId, flow.id, flow)
    },
    /** Changes the stored flow without telling the listeners (another instance changed it, this one did not hear). */
    replaceQuietly(flow: FlowForRun) {
      flows.set(flow.id, flow)
    },
    async remove(flow: FlowForRun) {
      flows.delete(flow.id)
      for (const listener of listeners) await listener(flow.projectId, flow.id, null)
    },
  }
}

export interface StartCall {
  readonly flow: FlowForRun
  readonly trigger: TriggerInput
  readonly initiator: Principal | null
  readonly options?: { depth?: number; parentRunId?: string }
  readonly mode: 'start' | 'runNow'
}

/** A RunStarter that records every call; runNow answers with `outcome(call)` (completed with no steps by default). */
export function createFakeRuns(outcome: (call: StartCall) => Partial<RunOutcome> = () => ({})) {
  const calls: StartCall[] = []
  let failStart: { error: Error; flowId?: string } | null = null
  const runs: RunStarter = {
    async start(flow, trigger, initiator, options) {
      if (failStart && (failStart.flowId === undefined || failStart.flowId === flow.id)) throw failStart.error
      calls.push({ flow, trigger: structuredClone(trigger), initiator, options, mode: 'start' })
      return { runId: `run${calls.length}`, status: 'running', startedAt: new Date(0).toISOString() }
    },
    async runNow(flow, trigger, initiator, options) {
      const call: StartCall = { flow, trigger: structuredClone(trigger), initiator, options, mode: 'runNow' }
      calls.push(call)
      return { runId: `run${calls.length}`, status: 'completed', steps: {}, error: null, ...outcome(call) }
    },
  }
  return {
    runs,
    calls,
    /** Makes start throw `error` (for one flow, or every flow); null stops it. */
    failStartWith(error: Error | null, flowId?: string) {
      failStart = error && { error, flowId }
    },
  }
}

export const silentLog = pino({ level: 'silent' })

/** Every dependency of createTriggers, faked or in memory (manual clock, memory queue); override what a test needs. */
export function fakeDeps(overrides: Partial<TriggerDeps> = {}) {
  const clock = overrides.clock ?? createManualClock(Date.UTC(2026, 0, 1))
  const flows = createFakeFlows()
  const runs = createFakeRuns()
  const deps: TriggerDeps = {
    flows: flows.lookup,
    runs: runs.runs,
    events: createEventBus<TriggerEvents>(silentLog),
    hooks: createWriteHooks(),
    queue: createMemoryQueue({ clock }),
    clock,
    log: silentLog,
    personOf: async () => null,
    authorize: async () => {},
    trustProxy: false,
    ...overrides,
  }
  return { deps, flows, runs, clock }
}

/** Lets the bus's queued handlers (microtasks, then their awaits) run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}
