import {
  ScriptCreateSchema,
  scriptCreateShape,
  ScriptPatchSchema,
  type Script,
  type ScriptsService,
} from '../../automate/index.js'
import {
  CreateLensSchema,
  lensCreateShape,
  UpdateLensSchema,
  type Lens,
  type LensesService,
} from '../../lenses/index.js'
import {
  CreateSearchIndexSchema,
  searchIndexCreateShape,
  UpdateSearchIndexSchema,
  type SearchIndex,
  type SearchIndexesService,
} from '../../search-indexes/index.js'
import {
  CreateWebhookSchema,
  UpdateWebhookSchema,
  webhookCreateShape,
  type Webhook,
  type WebhooksService,
} from '../../webhooks/index.js'
import { flowProvider, type FlowServices } from './flow.js'
import { allPages, resourceProvider, type BrickProvider } from './provider.js'

export interface AutomationServices extends FlowServices {
  lenses: LensesService
  webhooks: WebhooksService
  searchIndexes: SearchIndexesService
  scripts: ScriptsService
}

/** lens, webhook, search-index and script bricks (automation spec "Per-kind limits"). */
export function automationProviders(s: AutomationServices): BrickProvider[] {
  return [
    resourceProvider<Lens, unknown, unknown>({
      kind: 'lens',
      route: '/api/v1/lenses',
      createSchema: CreateLensSchema,
      updateSchema: UpdateLensSchema,
      shape: (lens) => lensCreateShape(lens as unknown as Record<string, unknown>),
      key: ['name'],
      idOf: (lens) => lens.id,
      all: (actor) => allPages((page, limit) => s.lenses.list(actor, page, limit)),
      get: (actor, id) => s.lenses.get(actor, id),
      create: (actor, input) => s.lenses.create(actor, input as never),
      update: (actor, id, input) => s.lenses.update(actor, id, input as never),
      remove: (actor, id) => s.lenses.delete(actor, id),
      // Whether it is switched on and which version is published are the project's (spec: not compared).
      notCompared: ['enabled'],
      // A lens installs as a draft: it renders once someone publishes it (spec: lens.not_published).
      warnings: (_actor, _desired, live) =>
        live === null || live.shape.publishedVersion === undefined
          ? [{ code: 'lens.not_published', message: 'The lens is installed as a draft; publish it to render it' }]
          : [],
    }),
    resourceProvider<Webhook, unknown, unknown>({
      kind: 'webhook',
      route: '/api/v1/webhooks',
      createSchema: CreateWebhookSchema,
      updateSchema: UpdateWebhookSchema,
      shape: (webhook) => webhookCreateShape(webhook as unknown as Record<string, unknown>),
      key: ['name'],
      idOf: (webhook) => webhook.id,
      all: (actor) => s.webhooks.list(actor),
      get: (actor, id) => s.webhooks.get(actor, id),
      create: (actor, input) => s.webhooks.create(actor, input as never),
      update: (actor, id, input) => s.webhooks.update(actor, id, input as never),
      remove: (actor, id) => s.webhooks.delete(actor, id),
      // Credentials are never read back: a secret compares as whether one is held, headers by name.
      comparable: ({ secret, headers, ...rest }) => ({
        ...rest,
        hasSecret: secret !== undefined && secret !== null,
        headers: Object.keys((headers ?? {}) as object).sort(),
      }),
    }),
    resourceProvider<SearchIndex, unknown, unknown>({
      kind: 'search-index',
      route: '/api/v1/search-indexes',
      createSchema: CreateSearchIndexSchema,
      updateSchema: UpdateSearchIndexSchema,
      shape: (index) => searchIndexCreateShape(index as unknown as Record<string, unknown>),
      key: ['name'],
      // Search indexes are addressed by name.
      idOf: (index) => index.name,
      all: (actor) => s.searchIndexes.list(actor),
      get: (actor, name) => s.searchIndexes.get(actor, name),
      create: (actor, input) => s.searchIndexes.create(actor, input as never),
      update: (actor, name, input) => s.searchIndexes.update(actor, name, input as never),
      remove: (actor, name) => s.searchIndexes.delete(actor, name),
      updateBody: ({ name: _name, ...rest }) => rest,
    }),
    resourceProvider<Script, unknown, unknown>({
      kind: 'script',
      route: '/api/v1/automate/scripts',
      createSchema: ScriptCreateSchema,
      updateSchema: ScriptPatchSchema,
      shape: (script) => scriptCreateShape(script as unknown as Record<string, unknown>),
      key: ['name'],
      idOf: (script) => script.id,
      all: (actor) => s.scripts.list(actor),
      get: (actor, id) => s.scripts.get(actor, id),
      create: (actor, input) => s.scripts.create(actor, input),
      update: (actor, id, input) => s.scripts.update(actor, id, input),
      remove: (actor, id) => s.scripts.delete(actor, id),
      // Limits are the instance's to tune (spec: not compared); hosts compare as a set.
      notCompared: ['max_cpu_ms', 'max_memory_mb'],
      warnings: () => [
        {
          code: 'script.limits_not_compared',
          message: 'max_cpu_ms and max_memory_mb are the instance’s and not compared',
        },
      ],
      comparable: (shape) => ({ ...shape, allowed_hosts: [...((shape.allowed_hosts as string[]) ?? [])].sort() }),
    }),
    flowProvider(s),
  ]
}
