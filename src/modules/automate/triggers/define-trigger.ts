import type { OpenAPIHono } from '@hono/zod-openapi'
import type { z } from 'zod'
import type { Clock } from '../../../lib/clock.js'
import type { EventBus } from '../../../lib/events/index.js'
import type { AppEnv } from '../../../lib/http/index.js'
import type { Logger } from '../../../lib/log.js'
import type { RouteGuards } from '../../../lib/module.js'
import type { Principal } from '../../../lib/principal.js'
import type { JobQueue } from '../../../lib/queue/index.js'
import type { AuthEvents } from '../../auth/index.js'
import type { CollectionEvents } from '../../collections/index.js'
import type { FileEvents } from '../../files/index.js'
import type { RecordEvents, WriteHooks } from '../../records/index.js'
import type { FlowForRun, FlowLookup, RunStarter } from '../model.js'

/** The events triggers listen to: record writes (event_action), sign-ins, uploads and schema changes (app_event). */
export type TriggerEvents = RecordEvents & AuthEvents & FileEvents & CollectionEvents

/** What every trigger is built on; `createTriggers` gets it once and hands it to each trigger's `start`. */
export interface TriggerDeps {
  readonly flows: FlowLookup
  readonly runs: RunStarter
  readonly events: EventBus<TriggerEvents>
  /** The records write pipeline's blocking hooks (event_filter). */
  readonly hooks: WriteHooks
  readonly queue: JobQueue
  readonly clock: Clock
  readonly log: Logger
  /**
   * The principal of a person as they are now (their current role, no session), for events that carry
   * only a snapshot (user.login, file.upload, collection.update): who a triggering_user run acts as. Null
   * when the person is gone or banned.
   */
  readonly personOf: (projectId: string, userId: string) => Promise<Principal | null>
  /** The access check (access.authorize): throws unauthorized or forbidden unless the principal holds the permission. */
  readonly authorize: (principal: Principal, permission: string) => Promise<void>
  /** TRUST_PROXY: the client IP of a webhook call comes from X-Forwarded-For (ip_allowlist). */
  readonly trustProxy: boolean
}

/** What a started trigger gives back: flow (de)activation for triggers that hold state, routes, and its stop. */
export interface TriggerWiring {
  /** Told when a flow of this type is active with a published version (at start-up and on every change). Idempotent. */
  activate?(flow: FlowForRun): Promise<void>
  /** Told when a flow stops being an active flow of this type (deactivated, deleted, trigger changed). Idempotent. */
  deactivate?(projectId: string, flowId: string): Promise<void>
  routers?(guards: RouteGuards): OpenAPIHono<AppEnv>[]
  /** Removes listeners and hooks; the queue itself is closed by the app. */
  stop?(): Promise<void> | void
}

/**
 * One trigger type (automation spec "Trigger types"): its config schema (declared in its file, checked when a
 * flow is saved), whether it blocks what fired it, and `start`, which wires it to its source (event bus, write
 * hooks, queue schedules, HTTP routes).
 */
export interface TriggerDefinition<T extends string = string, S extends z.ZodType = z.ZodType> {
  readonly type: T
  readonly label: string
  /** event_filter blocks the write; another_flow depends on its parent; the rest answer or return at once. */
  readonly blocking: boolean | 'parent'
  readonly configSchema: S
  start(deps: TriggerDeps): Promise<TriggerWiring> | TriggerWiring
}

/** Keeps each trigger file a plain value checked against the definition. */
export function defineTrigger<const T extends string, S extends z.ZodType>(
  definition: TriggerDefinition<T, S>,
): TriggerDefinition<T, S> {
  return Object.freeze(definition)
}
