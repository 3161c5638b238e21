import { AppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import type { SettingKey } from '../settings/index.js'
import { viewOf } from './collection-view.js'
import type { ToolServices } from './types.js'

/** One resource of the tool server: a fixed URI read as the key's principal. */
export interface ResourceDefinition {
  readonly uri: string
  readonly name: string
  readonly description: string
  /** application/json (content is a JSON value) or text/markdown (content is a string). */
  readonly mimeType: 'application/json' | 'text/markdown'
  read(principal: Principal, services: ToolServices): Promise<unknown>
}

/**
 * The settings service://system/settings shows: an allow-list, so a setting added later stays out until
 * someone decides it is harmless to show a model. Agent rules have their own resource.
 */
export const shownSettings: readonly SettingKey[] = [
  'auth.usernameEnabled',
  'auth.requireEmail',
  'ai.mcp_rate_limit',
  'files.strategy',
  'files.quotaBytes',
  'files.variants',
  'automate.archival_days',
  'i18n.defaultLocale',
]

/** What a section the key may not read becomes: left out (null), never an error for the whole resource. */
async function orNull<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read()
  } catch (err) {
    if (err instanceof AppError && (err.code === 'forbidden' || err.code === 'unauthorized')) return null
    throw err
  }
}

const projectContext: ResourceDefinition = {
  uri: 'service://project/context',
  name: 'Project context',
  description:
    'The project as this key sees it: collections it may read, roles and flows (null without system/roles:read or system/automate:read), and how it is authenticated',
  mimeType: 'application/json',
  async read(principal, services) {
    const collections = await services.collections.visibleTo(principal)
    const roles = await orNull(async () =>
      (await services.access.listRoles(principal)).map((r) => ({ id: r.id, name: r.name, description: r.description })),
    )
    const flows = await orNull(async () =>
      (await services.flows.list(principal)).map((f) => ({
        id: f.id,
        slug: f.slug,
        name: f.name,
        status: f.status,
        triggerType: f.triggerType,
      })),
    )
    return {
      projectId: principal.projectId,
      collections: collections.map((c) => c.name),
      roles,
      flows,
      auth: {
        method: 'api_key',
        keyId: principal.apiKeyId,
        capabilities: principal.capabilities,
        serviceKey: principal.userId === null,
      },
    }
  },
}

const collectionsResource: ResourceDefinition = {
  uri: 'service://collections',
  name: 'Collections',
  description: 'Every collection this key may read, with the field definitions it may read',
  mimeType: 'application/json',
  async read(principal, services) {
    const collections = await services.collections.visibleTo(principal)
    return { collections: await Promise.all(collections.map((c) => viewOf(principal, c, services))) }
  },
}

const systemSettings: ResourceDefinition = {
  uri: 'service://system/settings',
  name: 'System settings',
  description: `Non-sensitive project settings (${shownSettings.join(', ')}); needs system/settings:read`,
  mimeType: 'application/json',
  async read(principal, services) {
    const all = await services.settings.read(principal)
    return { settings: Object.fromEntries(shownSettings.map((key) => [key, all[key]])) }
  },
}

const agentRules: ResourceDefinition = {
  uri: 'service://docs/agent-rules',
  name: 'Agent rules',
  description: 'How an agent should work with this project, as markdown (setting ai.agent_rules)',
  mimeType: 'text/markdown',
  async read(principal, services) {
    return services.settings.get(principal.projectId, 'ai.agent_rules')
  },
}

/** The tool server's resources (core-api § Tool server). */
export const resources: readonly ResourceDefinition[] = Object.freeze([
  projectContext,
  collectionsResource,
  systemSettings,
  agentRules,
])

/** The resource at that URI, or undefined. */
export function resourceAt(uri: string): ResourceDefinition | undefined {
  return resources.find((r) => r.uri === uri)
}
