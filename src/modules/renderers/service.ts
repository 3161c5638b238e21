import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import { resourcePublisher, type EventBus, type ResourceEvents } from '../../lib/events/index.js'
import { AppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import { systemColumns } from '../collections/index.js'
import type { RecordsService } from '../records/index.js'
import type { CreateRendererInput, RenderedRecord, Renderer, UpdateRendererInput } from './schemas.js'
import { createRenderersStore, type RendererChanges, type RendererRow } from './store.js'
import { checkRendererTemplate, renderRecordHtml } from './template.js'

export interface RenderersDeps {
  systemDb: Kysely<any>
  clock: Clock
  access: Pick<AccessService, 'authorize'>
  audit: Pick<AuditService, 'record'>
  /** Records are read as the caller: row rules, field allowlists and hidden-means-missing apply to every render. */
  records: Pick<RecordsService, 'get' | 'open'>
  /** renderer.create, renderer.update, renderer.delete (docs/events.md). */
  events: EventBus<RendererEvents>
}

export type RendererEvents = ResourceEvents<'renderer', Renderer>

export const RENDERERS_RESOURCE = 'system/renderers'
const notFound = () => new AppError('not_found', 'Renderer not found')
const systemNames: ReadonlySet<string> = new Set(systemColumns.map((c) => c.name))

/** Renderers (docs/renderers.md, decision 065): CRUD under system/renderers and one record rendered as the caller. */
export function createRenderersService(deps: RenderersDeps) {
  const store = createRenderersStore(deps.systemDb)
  const may = (actor: Principal, action: 'read' | 'create' | 'update' | 'delete') =>
    deps.access.authorize(actor, `${RENDERERS_RESOURCE}:${action}`)
  const publish = resourcePublisher(deps.events, 'renderer', deps.clock)

  async function rowOf(projectId: string, id: string): Promise<RendererRow> {
    const row = await store.byId(projectId, id)
    if (!row) throw notFound()
    return row
  }

  /**
   * The save-time check (STYLE 13): the collection is opened as the saver (collection_not_found when they
   * cannot see it), the template parses and the names it reads at the record's level are its fields.
   */
  async function check(actor: Principal, collection: string, template: string): Promise<void> {
    const opened = await deps.records.open(actor, collection, 'read')
    checkRendererTemplate(template, (name) => systemNames.has(name) || opened.shape.byName.has(name))
  }

  return {
    /** A page of the project's renderers by name, optionally of one collection. Throws unauthorized, forbidden. */
    async list(
      actor: Principal,
      page: number,
      limit: number,
      collection?: string,
    ): Promise<{ data: Renderer[]; total: number }> {
      await may(actor, 'read')
      const { rows, total } = await store.list(actor.projectId, page, limit, collection)
      return { data: rows.map(toRenderer), total }
    },

    /** One renderer. Throws forbidden, not_found (also another project's). */
    async get(actor: Principal, id: string): Promise<Renderer> {
      await may(actor, 'read')
      return toRenderer(await rowOf(actor.projectId, id))
    },

    /** Saves a renderer. Throws forbidden, validation_error (template), collection_not_found, already_exists (name). */
    async create(actor: Principal, input: CreateRendererInput): Promise<Renderer> {
      await may(actor, 'create')
      await check(actor, input.collection, input.template)
      const now = deps.clock.seconds()
      const row: RendererRow = {
        id: newId(),
        project_id: actor.projectId,
        name: input.name,
        collection: input.collection,
        kind: input.kind,
        template: input.template,
        created_by: actor.userId,
        created_at: now,
        updated_at: now,
      }
      await store.insert(row)
      await deps.audit.record({
        projectId: actor.projectId,
        action: 'renderer.created',
        actor,
        target: { type: 'renderer', id: row.id },
        details: { name: row.name, collection: row.collection },
      })
      const renderer = toRenderer(row)
      publish(actor, row.id, null, renderer)
      return renderer
    },

    /** Changes a renderer; a new template or collection is checked again. Throws forbidden, not_found, validation_error, collection_not_found, already_exists. */
    async update(actor: Principal, id: string, input: UpdateRendererInput): Promise<Renderer> {
      await may(actor, 'update')
      const row = await rowOf(actor.projectId, id)
      const changes: RendererChanges = {}
      for (const key of ['name', 'collection', 'kind', 'template'] as const) {
        const value = input[key]
        if (value !== undefined && value !== row[key]) changes[key] = value
      }
      if (Object.keys(changes).length === 0) return toRenderer(row)
      if (changes.collection !== undefined || changes.template !== undefined)
        await check(actor, changes.collection ?? row.collection, changes.template ?? row.template)
      changes.updated_at = deps.clock.seconds()
      if (!(await store.update(actor.projectId, id, changes))) throw notFound()
      await deps.audit.record({
        projectId: actor.projectId,
        action: 'renderer.updated',
        actor,
        target: { type: 'renderer', id },
        details: { name: changes.name ?? row.name, changed: Object.keys(changes).filter((k) => k !== 'updated_at') },
      })
      const renderer = toRenderer({ ...row, ...changes })
      publish(actor, id, toRenderer(row), renderer)
      return renderer
    },

    /** Deletes a renderer. Throws forbidden, not_found. */
    async delete(actor: Principal, id: string): Promise<void> {
      await may(actor, 'delete')
      const row = await rowOf(actor.projectId, id)
      if (!(await store.delete(actor.projectId, id))) throw notFound()
      await deps.audit.record({
        projectId: actor.projectId,
        action: 'renderer.deleted',
        actor,
        target: { type: 'renderer', id },
        details: { name: row.name },
      })
      publish(actor, id, toRenderer(row), null)
    },

    /**
     * Renders one record as the caller: read through the records service (a record they cannot read is
     * record_not_found; a field their allowlist hides is absent, so renders empty). Throws forbidden,
     * not_found, record_not_found, collection_not_found, validation_error (a template no longer valid),
     * limit_exceeded.
     */
    async render(actor: Principal, id: string, recordId: string): Promise<RenderedRecord> {
      await may(actor, 'read')
      const row = await rowOf(actor.projectId, id)
      const { data } = await deps.records.get(actor, row.collection, recordId, {})
      // Parsed again: a template saved valid stays valid (names of a dropped field just render empty).
      const template = checkRendererTemplate(row.template, () => true)
      const html = renderRecordHtml(template, data as Record<string, unknown>)
      return { rendererId: row.id, recordId, kind: row.kind as RenderedRecord['kind'], html }
    },

    /** Removes the renderers of removed collections (the collections module's onRemoved). */
    async removeCollections(projectId: string, names: readonly string[]): Promise<void> {
      await store.deleteForCollections(projectId, names)
    },
  }
}

export type RenderersService = ReturnType<typeof createRenderersService>

function toRenderer(row: RendererRow): Renderer {
  return {
    id: row.id,
    name: row.name,
    collection: row.collection,
    kind: row.kind as Renderer['kind'],
    template: row.template,
    createdBy: row.created_by,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  }
}
