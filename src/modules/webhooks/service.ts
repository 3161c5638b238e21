import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import type { SecretBox } from '../../lib/crypto/index.js'
import { AppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import { isBlockedHost } from '../../lib/outbound/index.js'
import type { Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import type { CollectionsService } from '../collections/index.js'
import {
  MASK,
  type CreateWebhookInput,
  type Delivery,
  type RecordEventName,
  type UpdateWebhookInput,
  type Webhook,
} from './schemas.js'
import { createActiveWebhooks } from './active-cache.js'
import { createWebhooksStore, type DeliveryRow, type WebhookChanges, type WebhookRow } from './store.js'

export interface WebhooksDeps {
  systemDb: Kysely<any>
  clock: Clock
  /** Tells every instance that a project's webhooks changed (the active webhooks cache). */
  pubsub: PubSub
  /** Seals secrets and header values at rest (purpose `webhooks`). */
  box: SecretBox
  audit: Pick<AuditService, 'record'>
  access: Pick<AccessService, 'authorize' | 'decide' | 'hasAdminAccess'>
  collections: Pick<CollectionsService, 'find'>
  /** ALLOW_PRIVATE_NETWORK: when false, a URL whose host is a loopback, private or link-local literal is refused on save. */
  allowPrivateNetwork: boolean
}

/** What a delivery needs of its webhook: the URL and the unsealed secret and headers (in process only). */
export interface DeliveryTarget {
  readonly id: string
  readonly url: string
  readonly active: boolean
  readonly secret: string | null
  readonly headers: Record<string, string>
}

/** How long a settled delivery stays in the log. */
export const deliveryRetentionMs = 30 * 24 * 60 * 60 * 1000

const notFound = () => new AppError('not_found', 'Webhook not found')
const resource = 'system/webhooks'

/**
 * Collection webhooks (core-api § Events): CRUD under system/webhooks, secrets and header values sealed
 * (AES-256-GCM under SECRET_KEY) and never returned, and the delivery log. Delivering is deliver.ts's.
 */
export async function createWebhooksService(deps: WebhooksDeps) {
  const store = createWebhooksStore(deps.systemDb)
  const active = await createActiveWebhooks({
    pubsub: deps.pubsub,
    clock: deps.clock,
    load: (projectId) => store.activeOf(projectId),
  })

  async function rowOf(projectId: string, id: string): Promise<WebhookRow> {
    const row = await store.byId(projectId, id)
    if (!row) throw notFound()
    return row
  }

  /**
   * A webhook sends every event of its collection, whole records, to a URL the caller picks: only someone
   * who could read all of it may point one there (admin access, or collections/<name>:read with no row
   * filter and no field allowlist on a collection that is not private). Throws collection_not_found, forbidden.
   */
  async function assertMayWatch(actor: Principal, name: string): Promise<void> {
    const collection = await deps.collections.find(actor.projectId, name)
    if (!collection) throw new AppError('collection_not_found', `Collection "${name.slice(0, 60)}" not found`)
    if (await deps.access.hasAdminAccess(actor)) return
    const decision = await deps.access.decide(actor, `collections/${name}`, 'read')
    const whole =
      decision.allowed &&
      decision.itemFilter === null &&
      decision.fields === null &&
      collection.accessControl?.preset !== 'private'
    if (!whole) {
      throw new AppError(
        'forbidden',
        `A webhook on ${name} sends every record of it: you need read access to all of its rows and fields`,
        { resource: `collections/${name}`, action: 'read' },
      )
    }
  }

  function checkedUrl(value: string): string {
    const host = new URL(value).hostname
    if (!deps.allowPrivateNetwork && isBlockedHost(host)) {
      throw new AppError(
        'invalid_request',
        'url: loopback, private and link-local addresses are refused (ALLOW_PRIVATE_NETWORK is off)',
        { fields: ['url'] },
      )
    }
    return value
  }

  /** The headers to store: a mask keeps the stored value of that name; a mask with nothing stored is dropped. */
  function mergedHeaders(sent: Record<string, string>, stored: Record<string, string>): Record<string, string> {
    const out: Record<string, string> = {}
    for (const [name, value] of Object.entries(sent)) {
      if (value !== MASK) out[name] = value
      else if (stored[name] !== undefined) out[name] = stored[name]
    }
    return out
  }

  function storedHeaders(row: WebhookRow): Record<string, string> {
    return row.headers_sealed ? (JSON.parse(deps.box.open(row.headers_sealed)) as Record<string, string>) : {}
  }

  function sealHeaders(headers: Record<string, string>): Pick<WebhookRow, 'headers_sealed' | 'header_names'> {
    const names = Object.keys(headers)
    return {
      headers_sealed: names.length > 0 ? deps.box.seal(JSON.stringify(headers)) : null,
      header_names: JSON.stringify(names),
    }
  }

  return {
    /** The project's webhooks, oldest first. Throws forbidden (system/webhooks:read). */
    async list(actor: Principal): Promise<Webhook[]> {
      await deps.access.authorize(actor, `${resource}:read`)
      return (await store.list(actor.projectId)).map(toWebhook)
    },

    /** One webhook. Throws forbidden, not_found (also another project's). */
    async get(actor: Principal, id: string): Promise<Webhook> {
      await deps.access.authorize(actor, `${resource}:read`)
      return toWebhook(await rowOf(actor.projectId, id))
    },

    /** Saves a webhook; nothing is sent. Throws forbidden, collection_not_found, invalid_request (a refused URL). */
    async create(actor: Principal, input: CreateWebhookInput): Promise<Webhook> {
      await deps.access.authorize(actor, `${resource}:create`)
      await assertMayWatch(actor, input.collection)
      const now = deps.clock.seconds()
      const secret = input.secret === undefined || input.secret === null || input.secret === MASK ? null : input.secret
      const row: WebhookRow = {
        id: newId(),
        project_id: actor.projectId,
        name: input.name ?? `${input.collection} webhook`,
        collection: input.collection,
        events: JSON.stringify(input.events),
        url: checkedUrl(input.url),
        secret_sealed: secret === null ? null : deps.box.seal(secret),
        ...sealHeaders(mergedHeaders(input.headers, {})),
        active: input.active,
        created_by: actor.userId ?? null,
        created_at: now,
        updated_at: now,
      }
      await store.insert(row)
      await active.changed(actor.projectId)
      await deps.audit.record({
        projectId: actor.projectId,
        action: 'webhook.created',
        actor,
        target: { type: 'webhook', id: row.id },
        details: { name: row.name, collection: row.collection, url: urlForLog(row.url) },
      })
      return toWebhook(row)
    },

    /**
     * Changes the fields sent. `secret`: a value sets it, null removes it, the mask (or leaving it out)
     * keeps it. `headers` replaces the set; a mask as a value keeps that header's stored value. A `url` on
     * another origin (scheme, host, port) drops the stored secret and header values not sent again.
     * Throws forbidden, not_found, collection_not_found, invalid_request.
     */
    async update(actor: Principal, id: string, input: UpdateWebhookInput): Promise<Webhook> {
      await deps.access.authorize(actor, `${resource}:update`)
      const row = await rowOf(actor.projectId, id)
      // Whoever changes a webhook answers for what it sends from now on.
      await assertMayWatch(actor, input.collection ?? row.collection)
      const changes: WebhookChanges = {}
      if (input.name !== undefined) changes.name = input.name
      if (input.collection !== undefined) changes.collection = input.collection
      if (input.events !== undefined) changes.events = JSON.stringify(input.events)
      if (input.url !== undefined) changes.url = checkedUrl(input.url)
      if (input.active !== undefined) changes.active = input.active
      // The secret and header values were given for one origin and read as the mask: a caller who moves the
      // webhook elsewhere must send them again, or the new origin would get them unseen (issue 25, finding 6).
      const moved = input.url !== undefined && originOf(input.url) !== originOf(row.url)
      const stored = storedHeaders(row)
      const dropped: string[] = []
      if (input.secret === null) changes.secret_sealed = null
      else if (input.secret !== undefined && input.secret !== MASK) changes.secret_sealed = deps.box.seal(input.secret)
      else if (moved && row.secret_sealed !== null) {
        changes.secret_sealed = null
        dropped.push('secret')
      }
      if (input.headers !== undefined)
        Object.assign(changes, sealHeaders(mergedHeaders(input.headers, moved ? {} : stored)))
      else if (moved && row.headers_sealed !== null) Object.assign(changes, sealHeaders({}))
      if (moved)
        for (const name of Object.keys(stored))
          if (input.headers === undefined || input.headers[name] === MASK) dropped.push(`headers.${name}`)
      const changed = Object.keys(input).filter((key) => key !== 'secret' || input.secret !== MASK)
      if (changed.length === 0) return toWebhook(row)
      changes.updated_at = deps.clock.seconds()
      if (!(await store.update(actor.projectId, id, changes))) throw notFound()
      await active.changed(actor.projectId)
      // Field names only: the new values may include the secret or a credential header.
      const details = { name: changes.name ?? row.name, changed, ...(dropped.length > 0 ? { dropped } : {}) }
      await deps.audit.record({
        projectId: actor.projectId,
        action: 'webhook.updated',
        actor,
        target: { type: 'webhook', id },
        details,
      })
      return toWebhook({ ...row, ...changes })
    },

    /** Deletes the webhook and its delivery log; deliveries still queued are dropped. Throws forbidden, not_found. */
    async delete(actor: Principal, id: string): Promise<void> {
      await deps.access.authorize(actor, `${resource}:delete`)
      const row = await rowOf(actor.projectId, id)
      if (!(await store.delete(actor.projectId, id))) throw notFound()
      await active.changed(actor.projectId)
      await deps.audit.record({
        projectId: actor.projectId,
        action: 'webhook.deleted',
        actor,
        target: { type: 'webhook', id },
        details: { name: row.name, collection: row.collection },
      })
    },

    /** A page of a webhook's delivery log, newest first (status, attempts, durations; never the payload or secret). Throws forbidden, not_found. */
    async deliveries(
      actor: Principal,
      id: string,
      page: number,
      limit: number,
    ): Promise<{ data: Delivery[]; total: number }> {
      await deps.access.authorize(actor, `${resource}:read`)
      await rowOf(actor.projectId, id)
      const { rows, total } = await store.deliveries(actor.projectId, id, page, limit)
      return { data: rows.map(toDelivery), total }
    },

    /** In process (deliver.ts): the project's active webhooks of a collection listening to `event`. */
    async listening(projectId: string, collection: string, event: RecordEventName): Promise<WebhookRow[]> {
      return (await active.of(projectId)).filter(
        (row) => row.collection === collection && eventsOf(row).includes(event),
      )
    },

    /** In process (deliver.ts): a webhook with its secret and headers unsealed, or null when it is gone. Never send it to a client or a log. */
    async target(projectId: string, id: string): Promise<DeliveryTarget | null> {
      const row = await store.byId(projectId, id)
      if (!row) return null
      return {
        id: row.id,
        url: row.url,
        active: Boolean(row.active),
        secret: row.secret_sealed ? deps.box.open(row.secret_sealed) : null,
        headers: storedHeaders(row),
      }
    },

    /** Removes the webhooks of collections that were deleted (collections' onRemoved). */
    async removeOfCollections(projectId: string, names: readonly string[]): Promise<number> {
      const removed = await store.deleteOfCollections(projectId, names)
      if (removed > 0) await active.changed(projectId)
      return removed
    },

    /** Forgets settled deliveries (success, failed) of every project last touched over 30 days before `now` (the daily prune job). */
    async pruneDeliveries(now = deps.clock.now()): Promise<number> {
      return store.pruneDeliveriesOfAllProjects(now - deliveryRetentionMs)
    },

    store,

    /** Stops listening for changes. */
    close: () => active.close(),
  }
}

export type WebhooksService = Awaited<ReturnType<typeof createWebhooksService>>

function eventsOf(row: WebhookRow): RecordEventName[] {
  return JSON.parse(row.events) as RecordEventName[]
}

function toWebhook(row: WebhookRow): Webhook {
  const names = JSON.parse(row.header_names) as string[]
  return {
    id: row.id,
    name: row.name,
    collection: row.collection,
    events: eventsOf(row),
    url: row.url,
    secret: row.secret_sealed ? MASK : null,
    hasSecret: row.secret_sealed !== null,
    headers: Object.fromEntries(names.map((name) => [name, MASK])),
    active: Boolean(row.active),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  }
}

export function toDelivery(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    event: row.event as Delivery['event'],
    collection: row.collection,
    recordId: row.record_id,
    status: row.status as Delivery['status'],
    attempts: Number(row.attempts),
    responseStatus: row.response_status === null ? null : Number(row.response_status),
    durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
    error: row.error,
    attemptLog: JSON.parse(row.attempt_log) as Delivery['attemptLog'],
    createdAt: Math.floor(Number(row.created_at) / 1000),
    updatedAt: Math.floor(Number(row.updated_at) / 1000),
  }
}

/** Scheme, host and port, as URL normalises them (`HTTP://Hooks.Example.com:80` is `http://hooks.example.com`). */
function originOf(value: string): string {
  return new URL(value).origin
}

/** A URL for the audit log: scheme, host and path, never the query (tokens travel there). */
export function urlForLog(value: string): string {
  const parsed = new URL(value)
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
}
