import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import { newId } from '../../lib/ids.js'
import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import { createAuditStore, type AuditRow } from './store.js'

/** Security events written to the audit log. Details never carry secrets: ids, names, counts, reasons. */
export type AuditAction =
  | 'user.sign_in'
  | 'user.sign_in_failed'
  | 'user.sign_up'
  | 'user.created'
  | 'user.updated'
  | 'user.deleted'
  | 'user.recovery_link_issued'
  | 'user.password_reset'
  | 'user.totp_enabled'
  | 'user.totp_disabled'
  | 'apikey.created'
  | 'apikey.revoked'
  | 'role.created'
  | 'role.updated'
  | 'role.deleted'
  | 'grants.replaced'
  | 'settings.updated'
  | 'project.created'
  | 'database.created'
  | 'collection.created'
  | 'collection.updated'
  | 'collection.deleted'
  | 'collection.truncated'
  | 'database.deleted'
  | 'record.transferred'
  | 'storage_connection.created'
  | 'storage_connection.updated'
  | 'storage_connection.deleted'
  | 'flow.created'
  | 'flow.updated'
  | 'flow.deleted'
  | 'flow.duplicated'
  | 'flow.imported'
  | 'flow.status_changed'
  | 'flow.published'
  | 'flow.rolled_back'
  | 'automate.quotas_updated'
  | 'script.created'
  | 'script.updated'
  | 'script.deleted'
  | 'search_index.created'
  | 'search_index.updated'
  | 'search_index.deleted'
  | 'webhook.created'
  | 'webhook.updated'
  | 'webhook.deleted'
  // Lenses (issue 17, item 5).
  | 'lens.created'
  | 'lens.updated'
  | 'lens.deleted'
  | 'lens.published'
  // The navigation tree (decision 064).
  | 'navigation.created'
  | 'navigation.updated'
  | 'navigation.deleted'
  | 'navigation.reordered'
  // Renderers and lens attachments (issue 29, decision 065).
  | 'renderer.created'
  | 'renderer.updated'
  | 'renderer.deleted'
  | 'lens_attachment.created'
  | 'lens_attachment.updated'
  | 'lens_attachment.deleted'
  // Saved views (decision 063).
  | 'view.created'
  | 'view.updated'
  | 'view.deleted'
  // File containers (issue 29, item 5).
  | 'container.created'
  | 'container.updated'
  | 'container.deleted'

export interface AuditEntry {
  projectId: string
  action: AuditAction
  actor: Principal | null
  /** For events with no principal yet (a failed sign-in names the attempted account, if any). */
  actorUserId?: string | null
  target?: { type: string; id: string | null }
  ip?: string | null
  details?: Record<string, unknown>
}

export interface AuditRecord {
  id: string
  at: number
  action: string
  actor: { type: string; id: string | null }
  target: { type: string; id: string | null } | null
  ip: string | null
  details: Record<string, unknown>
}

export interface AuditLogDeps {
  systemDb: Kysely<any>
  clock: Clock
  log: Logger
}

/**
 * The writing side of the audit log: what every module records through. It needs nothing but the system
 * database, so it is built first: the access module records its own changes here, and reading the log is
 * checked by the access module (createAuditService, built after it).
 */
export function createAuditLog(deps: AuditLogDeps) {
  const store = createAuditStore(deps.systemDb)
  let counter = 0
  return {
    store,
    /** Writes one entry; a failure is logged, never thrown at the action being audited. */
    async record(entry: AuditEntry): Promise<void> {
      const actor = entry.actor
      const row: AuditRow = {
        id: newId(),
        project_id: entry.projectId,
        at: deps.clock.seconds(),
        // Orders entries written within one second (per instance).
        seq: deps.clock.now() * 1000 + (counter = (counter + 1) % 1000),
        action: entry.action,
        actor_type: actor ? actor.kind : entry.actorUserId ? 'user' : 'anonymous',
        actor_id: actor ? (actor.apiKeyId ?? actor.userId) : (entry.actorUserId ?? null),
        target_type: entry.target?.type ?? null,
        target_id: entry.target?.id ?? null,
        ip: entry.ip ?? null,
        details: JSON.stringify(entry.details ?? {}),
      }
      try {
        await store.insert(row)
      } catch (err) {
        deps.log.error({ err, action: entry.action }, 'audit log write failed')
      }
    },
  }
}

export type AuditLog = ReturnType<typeof createAuditLog>

/**
 * Who may read the log is decided by the access module's `authorize`, handed in as this shape: access records
 * its own changes here, so audit imports nothing of access (a module never imports one that imports it).
 */
export interface AuditReadCheck {
  /** Throws unauthorized or forbidden unless the principal holds the permission. */
  authorize(actor: Principal, permission: string): Promise<void>
}

/** The audit log as modules and callers reach it: recording, and reading a page as the acting principal. */
export function createAuditService(deps: { auditLog: AuditLog; access: AuditReadCheck }) {
  const { store } = deps.auditLog
  return {
    record: deps.auditLog.record,

    /** One page of the entries of the project the caller acts in, newest first, optionally of one action. Throws unauthorized, forbidden. */
    async list(
      actor: Principal,
      options: { page: number; limit: number; action?: string },
    ): Promise<{ data: AuditRecord[]; total: number }> {
      await deps.access.authorize(actor, 'system/audit-log:read')
      const { rows, total } = await store.page(
        actor.projectId,
        options.action ?? null,
        (options.page - 1) * options.limit,
        options.limit,
      )
      return {
        total,
        data: rows.map((r) => ({
          id: r.id,
          at: r.at,
          action: r.action,
          actor: { type: r.actor_type, id: r.actor_id },
          target: r.target_type ? { type: r.target_type, id: r.target_id } : null,
          ip: r.ip,
          details: JSON.parse(r.details) as Record<string, unknown>,
        })),
      }
    },
  }
}

export type AuditService = ReturnType<typeof createAuditService>
