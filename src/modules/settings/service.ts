import type { Kysely } from 'kysely'
import { createProjectCache } from '../../lib/cache/project-cache.js'
import type { Clock } from '../../lib/clock.js'
import { AppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import { defaultSettings, settingDefinitions, settingKeys, type SettingKey, type Settings } from './definitions.js'
import { createSettingsStore } from './store.js'

const channel = 'settings.changed'

/** Project settings: defaults overlaid with what was saved; cached, and dropped everywhere on change. */
export async function createSettingsService(deps: {
  systemDb: Kysely<any>
  clock: Clock
  pubsub: PubSub
  audit: AuditService
  access: Pick<AccessService, 'authorize'>
}) {
  const store = createSettingsStore(deps.systemDb)
  const cache = await createProjectCache({ pubsub: deps.pubsub, channel, load })

  async function load(projectId: string): Promise<Settings> {
    const settings = defaultSettings() as Record<string, unknown>
    for (const row of await store.all(projectId)) {
      if (row.key in settingDefinitions) settings[row.key] = JSON.parse(row.value)
    }
    return Object.freeze(settings) as Settings
  }

  function all(projectId: string): Promise<Settings> {
    return cache.get(projectId)
  }

  return {
    /** Every setting of the project the caller acts in, flat dotted keys. Throws unauthorized, forbidden (system/settings:read). */
    async read(actor: Principal): Promise<Settings> {
      await deps.access.authorize(actor, 'system/settings:read')
      return all(actor.projectId)
    },

    /**
     * Every setting of a project, for the modules whose behaviour they configure (sign-up, uploads); not a
     * caller's operation, so no permission is checked. A caller reads them through `read`.
     */
    all,

    /** One setting's value, for the module it configures (as `all`). */
    async get<K extends SettingKey>(projectId: string, key: K): Promise<Settings[K]> {
      return (await all(projectId))[key]
    },

    /** Changes only the keys sent. Throws unauthorized, forbidden (system/settings:update), invalid_request naming an unknown key or a bad value; writes nothing then. */
    async update(actor: Principal, patch: Record<string, unknown>): Promise<Settings> {
      await deps.access.authorize(actor, 'system/settings:update')
      const projectId = actor.projectId
      const now = deps.clock.seconds()
      const rows = Object.entries(patch).map(([key, value]) => {
        if (!(settingKeys as string[]).includes(key)) {
          throw new AppError('invalid_request', `Unknown setting "${key.slice(0, 100)}"`, {
            key: key.slice(0, 100),
            known: settingKeys,
          })
        }
        const parsed = settingDefinitions[key as SettingKey].schema.safeParse(value)
        if (!parsed.success)
          throw new AppError('invalid_request', `${key}: ${parsed.error.issues[0]?.message ?? 'invalid value'}`, {
            key,
          })
        return { project_id: projectId, key, value: JSON.stringify(parsed.data), updated_at: now }
      })
      if (rows.length === 0) throw new AppError('invalid_request', 'Send at least one setting')
      await store.upsert(rows)
      await cache.invalidate(projectId)
      await deps.audit.record({
        projectId,
        action: 'settings.updated',
        actor,
        target: { type: 'settings', id: null },
        details: { keys: rows.map((r) => r.key) },
      })
      return all(projectId)
    },

    async close(): Promise<void> {
      await cache.close()
    },
  }
}

export type SettingsService = Awaited<ReturnType<typeof createSettingsService>>
