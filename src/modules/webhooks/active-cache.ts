import type { Clock } from '../../lib/clock.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import type { WebhookRow } from './store.js'

const channel = 'webhooks.changed'
/** Pub/sub delivery is at most once: an entry also expires on its own. */
const ttlMs = 60_000

/**
 * The active webhooks of each project, so a record write does not read the webhooks table: filled on
 * first use, dropped on every change in any instance (pub/sub, awaited, so a webhook saved is listening
 * everywhere when the save answers) and after a minute. A load that overlaps a change is not kept.
 */
export async function createActiveWebhooks(deps: {
  pubsub: PubSub
  clock: Clock
  load: (projectId: string) => Promise<WebhookRow[]>
}) {
  const entries = new Map<string, { rows: WebhookRow[]; at: number }>()
  const generations = new Map<string, number>()
  const drop = (projectId: string) => {
    entries.delete(projectId)
    generations.set(projectId, (generations.get(projectId) ?? 0) + 1)
  }
  const unsubscribe = await deps.pubsub.subscribe(channel, drop)
  return {
    /** The project's active webhooks (cached). */
    async of(projectId: string): Promise<WebhookRow[]> {
      const entry = entries.get(projectId)
      if (entry && deps.clock.now() - entry.at < ttlMs) return entry.rows
      const generation = generations.get(projectId) ?? 0
      const rows = await deps.load(projectId)
      if ((generations.get(projectId) ?? 0) === generation) entries.set(projectId, { rows, at: deps.clock.now() })
      return rows
    },
    /** Drops the project's entry here and in every instance; resolves once they have. */
    async changed(projectId: string): Promise<void> {
      drop(projectId)
      await deps.pubsub.publish(channel, projectId, { awaitDelivery: true })
    },
    close: () => unsubscribe(),
  }
}
