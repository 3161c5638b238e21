import type { Clock } from '../../lib/clock.js'
import { AppError } from '../../lib/errors.js'
import { randomBytes } from 'node:crypto'
import type { Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import type { UsersService } from '../users/index.js'
import type { InboxChannelService } from './live.js'
import { SendSchema, type Notification, type NotificationType, type SendInput } from './schemas.js'
import type { NotificationRow, NotificationsStore } from './store.js'

export interface NotificationsDeps {
  store: NotificationsStore
  clock: Clock
  live: Pick<InboxChannelService, 'publish'>
  users: Pick<UsersService, 'findRow' | 'list'>
  access: Pick<AccessService, 'listRoles'>
}

const notFound = () => new AppError('not_found', 'Notification not found')
const iso = (ms: number) => new Date(ms).toISOString()

/**
 * Notification ids that sort in the order sent (the inbox's tie-break within one millisecond): the time in
 * milliseconds, a counter of this service, then random; 32 hex characters like every other id.
 */
function createOrderedIds(): (ms: number) => string {
  let sequence = 0
  return (ms) => {
    sequence = (sequence + 1) % 0x10000
    return `${ms.toString(16).padStart(12, '0')}${sequence.toString(16).padStart(4, '0')}${randomBytes(8).toString('hex')}`
  }
}

function toNotification(row: NotificationRow): Notification {
  return {
    id: row.id,
    title: row.title,
    message: row.message,
    type: row.type as NotificationType,
    link: row.link,
    read: row.read_at !== null,
    readAt: row.read_at === null ? null : iso(row.read_at),
    createdAt: iso(row.created_at),
    flowId: row.flow_id,
    runId: row.run_id,
  }
}

/**
 * The inbox is a person's own: a signed-in user (session) reads and changes only their own notifications.
 * An API key, a service key or system work has no inbox (403); another user's notification is missing (404).
 */
function inboxOf(actor: Principal): { projectId: string; userId: string } {
  if (actor.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to read your notifications')
  if (actor.kind !== 'user' || actor.userId === null)
    throw new AppError('forbidden', 'Notifications are read by the person they were sent to, signed in', {
      kind: actor.kind,
    })
  return { projectId: actor.homeProjectId, userId: actor.userId }
}

/**
 * In-app notifications (issue 17, decision 038): each user's inbox, and sending into one. A sender (a flow
 * run's principal, system work) reaches users of its own project only.
 */
export function createNotificationsService(deps: NotificationsDeps) {
  const { store, clock } = deps
  const orderedId = createOrderedIds()
  return {
    /** One page of the caller's own notifications, unread first, then newest first. Throws unauthorized, forbidden (not a person). */
    async list(actor: Principal, query: { page: number; limit: number; unread?: boolean }) {
      const { projectId, userId } = inboxOf(actor)
      const { rows, total, unread } = await store.page(
        projectId,
        userId,
        (query.page - 1) * query.limit,
        query.limit,
        query.unread ?? false,
      )
      return {
        data: rows.map(toNotification),
        total,
        page: query.page,
        limit: query.limit,
        hasMore: query.page * query.limit < total,
        unread,
      }
    },

    /** Marks one of the caller's notifications read. Throws unauthorized, forbidden, not_found (also for another user's). */
    async markRead(actor: Principal, id: string): Promise<Notification> {
      const { projectId, userId } = inboxOf(actor)
      if (!(await store.markRead(projectId, userId, id, clock.now()))) throw notFound()
      const row = await store.byId(projectId, userId, id)
      if (!row) throw notFound()
      return toNotification(row)
    },

    /** Marks every unread notification of the caller read. Throws unauthorized, forbidden. */
    async markAllRead(actor: Principal): Promise<{ updated: number }> {
      const { projectId, userId } = inboxOf(actor)
      return { updated: await store.markAllRead(projectId, userId, clock.now()) }
    },

    /** Deletes one of the caller's notifications. Throws unauthorized, forbidden, not_found (also for another user's). */
    async delete(actor: Principal, id: string): Promise<void> {
      const { projectId, userId } = inboxOf(actor)
      if (!(await store.delete(projectId, userId, id))) throw notFound()
    },

    /**
     * Puts a notification in a user's inbox and sends it live on their channel. The recipient must be a user
     * of the sender's project (any other id, or none, is `not_found` naming userId: nothing is said about
     * users elsewhere). With `dedupeKey`, nothing is sent while the user still has an unread one with that
     * key (answers null). Throws validation_error, not_found.
     */
    async send(sender: Principal, input: SendInput): Promise<Notification | null> {
      const parsed = SendSchema.safeParse(input)
      if (!parsed.success) {
        const issue = parsed.error.issues[0]
        throw new AppError(
          'validation_error',
          `${issue?.path.join('.') || 'notification'}: ${issue?.message ?? 'invalid'}`,
          { issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) },
        )
      }
      const body = parsed.data
      const projectId = sender.projectId
      const user = await deps.users.findRow(body.userId)
      if (!user || user.project_id !== projectId)
        throw new AppError('not_found', `No user ${body.userId} in this project`, { userId: body.userId })
      if (body.dedupeKey && (await store.unreadWithKey(projectId, user.id, body.dedupeKey))) return null
      const now = clock.now()
      const row: NotificationRow = {
        id: orderedId(now),
        project_id: projectId,
        user_id: user.id,
        title: body.title,
        message: body.message,
        type: body.type,
        link: body.link ?? null,
        flow_id: body.flowId ?? null,
        run_id: body.runId ?? null,
        dedupe_key: body.dedupeKey ?? null,
        read_at: null,
        created_at: now,
      }
      await store.insert(row)
      const notification = toNotification(row)
      await deps.live.publish(projectId, user.id, { type: 'notification.create', notification })
      return notification
    },

    /**
     * The project's admins: users not banned whose role has adminAccess (admin, super_admin, custom admin
     * roles), as the sender may list them. Throws forbidden (system/users:read, system/roles:read).
     */
    async adminIds(sender: Principal): Promise<string[]> {
      const roles = await deps.access.listRoles(sender)
      const adminRoles = new Set(roles.filter((r) => r.adminAccess).map((r) => r.name))
      const ids: string[] = []
      for (let page = 1; ; page++) {
        const { data, total } = await deps.users.list(sender, page, 100)
        for (const user of data) if (adminRoles.has(user.role) && !user.banned) ids.push(user.id)
        if (page * 100 >= total || data.length === 0) break
      }
      return ids
    },
  }
}

export type NotificationsService = ReturnType<typeof createNotificationsService>
