import { createSecretBox } from '../../lib/crypto/index.js'
import type { EventBus } from '../../lib/events/index.js'
import type { Logger } from '../../lib/log.js'
import type { AppModule } from '../../lib/module.js'
import type { Observers } from '../../lib/observers.js'
import type { OutboundClient } from '../../lib/outbound/index.js'
import type { Principal } from '../../lib/principal.js'
import type { JobQueue } from '../../lib/queue/index.js'
import type { RecordEvents } from '../records/index.js'
import { deliveryDefaults, startDeliveries, type DeliveryOptions } from './deliver.js'
import { webhooksRoutes } from './routes.js'
import { createWebhooksService, type WebhooksDeps } from './service.js'

export interface WebhooksModuleDeps extends Omit<WebhooksDeps, 'box'> {
  secretKey: string
  log: Logger
  queue: JobQueue
  events: EventBus<RecordEvents>
  outbound: OutboundClient
  /** The collections module's onRemoved: a removed collection's webhooks go with it. */
  removedCollections: Observers<[actor: Principal, projectId: string, names: readonly string[]]>
  /** Retry tuning (tests shorten the backoff); decision 034's defaults otherwise. */
  delivery?: Partial<DeliveryOptions>
}

/** Collection webhooks: CRUD and the delivery log; deliveries through the queue, signed, sent by lib/outbound. */
export async function createWebhooksModule(deps: WebhooksModuleDeps) {
  const { secretKey, log, queue, events, outbound, removedCollections, delivery, ...rest } = deps
  const service = await createWebhooksService({ ...rest, box: createSecretBox(secretKey, 'webhooks') })
  removedCollections.add(async (_actor, projectId, names) => void (await service.removeOfCollections(projectId, names)))
  const deliveries = await startDeliveries({
    webhooks: service,
    queue,
    events,
    outbound,
    clock: deps.clock,
    log,
    options: { ...deliveryDefaults, ...delivery },
  })
  return {
    service,
    routers: ({ security }) => [webhooksRoutes(service, security)],
    async close() {
      deliveries.stop()
      await service.close()
    },
  } satisfies AppModule
}
