import type { Config } from './config.js'
import { createMemoryWriteVersions, createRedisWriteVersions, type WriteVersions } from './lib/cache/write-versions.js'
import type { Clock } from './lib/clock.js'
import { createDatabaseRegistry, runMigrations, type DatabaseRegistry } from './lib/db/index.js'
import { createEventBus, type EventBus } from './lib/events/index.js'
import type { Logger } from './lib/log.js'
import { createMailer, type Mailer } from './lib/mail/index.js'
import { createMemoryPubSub, createRedisPubSub, type PubSub } from './lib/pubsub/index.js'
import { createRedisQueue, createSqlQueue, type JobQueue } from './lib/queue/index.js'
import { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter } from './lib/ratelimit/index.js'
import { createMemorySlots, createRedisSlots, type Slots } from './lib/slots/index.js'
import { createStorage, type LocalStorage, type S3Storage } from './lib/storage/index.js'
import { systemMigrations } from './migrations/system/index.js'
import type { AuthEvents } from './modules/auth/index.js'
import type { CollectionEvents } from './modules/collections/index.js'
import { bindingsBox, createBindingResolver } from './modules/databases/index.js'
import type { FileEvents } from './modules/files/index.js'
import type { ContainerEvents } from './modules/containers/index.js'
import type { LensAttachmentEvents } from './modules/lens-attachments/index.js'
import type { NavigationEvents } from './modules/navigation/index.js'
import type { RecordEvents } from './modules/records/index.js'
import type { RendererEvents } from './modules/renderers/index.js'
import type { ViewEvents } from './modules/views/index.js'

/** Builder resources' writes (docs/events.md "Builder resources"). */
export type BuilderEvents = ViewEvents & NavigationEvents & RendererEvents & LensAttachmentEvents & ContainerEvents

export type PlinthEvents = AuthEvents & RecordEvents & FileEvents & CollectionEvents & BuilderEvents

/** What every module is built on: databases, shared state, jobs, mail, events and object storage. */
export interface Platform {
  readonly registry: DatabaseRegistry
  readonly pubsub: PubSub
  readonly limiter: RateLimiter
  /** Per-collection write versions (cached counts, ETags): in process, or shared through Redis. */
  readonly writeVersions: WriteVersions
  /** Concurrency places with expiring leases (flow runs): in process, or shared through Redis. */
  readonly slots: Slots
  readonly queue: JobQueue
  readonly mailer: Mailer
  readonly events: EventBus<PlinthEvents>
  readonly storage: LocalStorage | S3Storage
  /** Closes all of the above, the queue first. */
  close(): Promise<void>
}

/** Opens the registry (running pending system migrations) and the shared building blocks, once; on failure closes what it opened. */
export async function createPlatform(config: Config, clock: Clock, log: Logger): Promise<Platform> {
  const closers: Closer[] = []
  try {
    const registry = await createDatabaseRegistry({
      kind: config.database.kind,
      dataDir: config.dataDir,
      postgresUrl: config.database.kind === 'postgres' ? config.database.url : undefined,
      onPoolError: (err) => log.warn({ err }, 'idle database connection lost'),
      // Registered bindings live in the system database; the lookup needs only it and the box.
      resolveBinding: createBindingResolver({
        box: bindingsBox(config.secretKey),
        allowPrivateNetwork: config.allowPrivateNetwork,
      }),
    })
    closers.unshift(() => registry.close())
    await migrateSystem(registry, log)
    const { pubsub, limiter, writeVersions, slots } = await createSharedState(config, clock, log)
    closers.unshift(
      () => pubsub.close(),
      () => limiter.close(),
      () => writeVersions.close(),
      () => slots.close(),
    )
    const queue = await createJobQueue(config, registry, clock, log)
    closers.unshift(() => queue.close())
    const mailer = createMailer(config.email, { log })
    closers.unshift(() => mailer.close())
    const events = createEventBus<PlinthEvents>(log)
    const storage = await createStorage({
      settings: config.storage,
      dataDir: config.dataDir,
      publicUrl: config.publicUrl,
      secretKey: config.secretKey,
      clock,
    })
    closers.unshift(() => storage.close())
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
      close: () => closeAll([() => queue.close(), ...closers], log),
    }
  } catch (err) {
    await closeAll(closers, log)
    throw err
  }
}

/** Applies pending system migrations; `plinth migrate` runs the same. */
export async function migrateSystem(registry: DatabaseRegistry, log: Logger): Promise<string[]> {
  const applied = await runMigrations(registry.system.db, registry.kind, systemMigrations)
  if (applied.length > 0) log.info({ applied }, 'migrations applied')
  return applied
}

interface SharedState {
  pubsub: PubSub
  limiter: RateLimiter
  writeVersions: WriteVersions
  slots: Slots
}

/** Caches, rate limits, write versions and invalidation messages: in process, or shared through Redis (REDIS_URL). */
async function createSharedState(config: Config, clock: Clock, log: Logger): Promise<SharedState> {
  if (!config.redisUrl)
    return {
      pubsub: createMemoryPubSub(),
      limiter: createMemoryRateLimiter({ clock }),
      writeVersions: createMemoryWriteVersions(),
      slots: createMemorySlots(),
    }
  const onError = (err: unknown) => log.warn({ err }, 'redis error')
  const pubsub = await createRedisPubSub(config.redisUrl, config.redisPrefix, { onError })
  let limiter: RateLimiter | null = null
  let writeVersions: WriteVersions | null = null
  try {
    limiter = await createRedisRateLimiter(config.redisUrl, `${config.redisPrefix}ratelimit:`, { onError })
    writeVersions = await createRedisWriteVersions(config.redisUrl, `${config.redisPrefix}version:`, { onError })
    const slots = await createRedisSlots(config.redisUrl, `${config.redisPrefix}slots:`, { onError })
    return { pubsub, limiter, writeVersions, slots }
  } catch (err) {
    await writeVersions?.close()
    await limiter?.close()
    await pubsub.close()
    throw err
  }
}

/**
 * Background jobs: alone (no REDIS_URL), durable in the system database (decision 055); with Redis,
 * BullMQ under the deployment's prefix, shared by every instance. close() waits as long as a shutdown does.
 */
async function createJobQueue(
  config: Config,
  registry: DatabaseRegistry,
  clock: Clock,
  log: Logger,
): Promise<JobQueue> {
  const options = { clock, log, closeTimeoutMs: config.shutdownTimeoutMs }
  if (!config.redisUrl) return createSqlQueue(registry.system, { ...options, shared: false })
  return createRedisQueue(config.redisUrl, config.redisPrefix, {
    ...options,
    onError: (err) => log.warn({ err }, 'redis error'),
  })
}

export type Closer = () => Promise<void>

/** Runs every closer in turn; one that fails is logged and the rest still run. */
export async function closeAll(closers: readonly Closer[], log: Logger): Promise<void> {
  for (const close of closers) {
    try {
      await close()
    } catch (err) {
      log.warn({ err }, 'error while closing')
    }
  }
}
