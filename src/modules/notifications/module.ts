import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import type { Logger } from '../../lib/log.js'
import type { AppModule } from '../../lib/module.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import type { AccessService } from '../access/index.js'
import type { UsersService } from '../users/index.js'
import { createInboxChannel } from './live.js'
import { notificationsRoutes } from './routes.js'
import { createNotificationsService } from './service.js'
import { createNotificationsStore } from './store.js'

/**
 * Notifications (decision 038): the inbox (`notifications`), sending into it (flows' send_notification,
 * the system flows), and each user's live channel, which the realtime module serves as a stream.
 */
export async function createNotificationsModule(deps: {
  systemDb: Kysely<any>
  clock: Clock
  pubsub: PubSub
  log: Logger
  users: Pick<UsersService, 'findRow' | 'list'>
  access: Pick<AccessService, 'listRoles'>
}) {
  const live = await createInboxChannel({ pubsub: deps.pubsub, log: deps.log })
  const service = createNotificationsService({
    store: createNotificationsStore(deps.systemDb),
    clock: deps.clock,
    live,
    users: deps.users,
    access: deps.access,
  })
  return {
    service,
    /** Each user's live channel, for the realtime module's stream. */
    live,
    routers: ({ security }) => [notificationsRoutes(service, security)],
    close: () => live.close(),
  } satisfies AppModule
}
