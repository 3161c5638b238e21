import type { Config } from '../config.js'
import type { Clock } from '../lib/clock.js'
import type { Logger } from '../lib/log.js'
import { createOutboundClient, type OutboundClient } from '../lib/outbound/index.js'
import { createAuditLog, type AuditLog } from '../modules/audit/index.js'
import type { Platform } from '../platform.js'
import type { AppOptions } from './options.js'

/** What every entry of the module list is built from, besides the modules above it. */
export interface AppContext extends Omit<Platform, 'close'> {
  readonly config: Config
  readonly options: AppOptions
  readonly clock: Clock
  readonly log: Logger
  /** What most factories take first. */
  readonly base: {
    readonly systemDb: Platform['registry']['system']['db']
    readonly clock: Clock
    readonly log: Logger
  }
  /** The audit writer (the system database alone): built before access, which records its own changes. */
  readonly auditLog: AuditLog
  /** Requests made on a caller's behalf (flows' network steps, collection webhooks): the address rule of addendum §6. */
  readonly outbound: OutboundClient
}

/** The context the module list is built from: the platform's parts (not its close), and the shared pieces. */
export function createAppContext(parts: {
  config: Config
  options: AppOptions
  platform: Platform
  clock: Clock
  log: Logger
}): AppContext {
  const { config, options, platform, clock, log } = parts
  const { registry, pubsub, limiter, writeVersions, slots, queue, mailer, events, storage } = platform
  const base = { systemDb: registry.system.db, clock, log }
  return {
    registry,
    pubsub,
    limiter,
    writeVersions,
    slots,
    queue,
    mailer,
    events,
    storage,
    config,
    options,
    clock,
    log,
    base,
    auditLog: createAuditLog(base),
    outbound: createOutboundClient({ ...options.outbound, allowPrivateNetwork: config.allowPrivateNetwork }),
  }
}
