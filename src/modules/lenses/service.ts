import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import { AppError, isAppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import { parseSectionTemplate } from '../../lib/template/sections.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import type { RecordsService } from '../records/index.js'
import { checkPageTemplate } from './page-check.js'
import { createRenderer, type RenderInput, type Rendered } from './render.js'
import { checkFilterParams, checkLensFilterBounds, sampleParams, substituteFilter } from './params.js'
import type { CreateLensInput, Lens, LensDefinition, LensVersion, UpdateLensInput } from './schemas.js'
import { createLensesStore, type LensChanges, type LensRow, type LensVersionRow } from './store.js'

export interface LensesDeps {
  systemDb: Kysely<any>
  clock: Clock
  access: Pick<AccessService, 'authorize'>
  audit: Pick<AuditService, 'record'>
  /** Reads go through the records service as the caller: row and column rules apply to every render. */
  records: Pick<RecordsService, 'find' | 'open'>
  /** Told once a lens is deleted (the module's onDeleted: what names the lens goes with it). */
  deleted?: (projectId: string, lensId: string) => Promise<void>
}

export const LENSES_RESOURCE = 'system/lenses'
const notFound = () => new AppError('not_found', 'Lens not found')

/**
 * Lenses (docs/lenses.md, decision 041): CRUD of drafts under system/lenses, publish to immutable
 * versions, and render of the published version (or, for editors, the draft) as html, csv or md.
 */
export function createLensesService(deps: LensesDeps) {
  const store = createLensesStore(deps.systemDb)
  const renderer = createRenderer({ records: deps.records })
  const may = (actor: Principal, action: 'read' | 'create' | 'update' | 'delete') =>
    deps.access.authorize(actor, `${LENSES_RESOURCE}:${action}`)

  async function rowOf(projectId: string, id: string): Promise<LensRow> {
    const row = await store.byId(projectId, id)
    if (!row) throw notFound()
    return row
  }

  /**
   * The save-time check (STYLE 13): templates parse, filter tags name declared parameters, and the query
   * runs once, as the saver, with stand-in parameter values, so an unknown field, a bad filter or a sort
   * key the saver may not read is refused now (validation_error 422; collection_not_found when the saver
   * cannot see the collection) rather than at every render.
   */
  async function checkDefinition(actor: Principal, definition: LensDefinition): Promise<void> {
    const names = new Set<string>()
    for (const param of definition.params) {
      if (names.has(param.name))
        throw new AppError('validation_error', `params: "${param.name}" is declared twice`, { at: 'params' })
      names.add(param.name)
    }
    for (const format of ['html', 'md'] as const) {
      const text = definition.template[format]
      if (text === undefined) continue
      const parsed = parseSectionTemplate(text)
      if (!parsed.ok)
        throw new AppError('validation_error', `template.${format}: ${parsed.error.message}`, {
          at: `template.${format}`,
          code: parsed.error.code,
        })
      if (format === 'html') checkPageTemplate(parsed.template)
    }
    checkFilterParams(definition.filter, definition.params)
    let samples: ReturnType<typeof sampleParams>
    try {
      samples = sampleParams(definition.params)
    } catch (err) {
      if (isAppError(err)) throw new AppError('validation_error', err.message, { at: 'params' })
      throw err
    }
    const filter =
      definition.filter === undefined ? undefined : JSON.stringify(substituteFilter(definition.filter, samples))
    try {
      await deps.records.find(actor, definition.collection, {
        filter,
        sort: definition.sort,
        fields: definition.fields,
        limit: 1,
        offset: 0,
      })
    } catch (err) {
      if (isAppError(err) && (err.code === 'invalid_request' || err.code === 'invalid_field')) {
        throw new AppError('validation_error', `The lens's query is refused: ${err.message}`, {
          ...err.details,
          at: 'query',
        })
      }
      throw err
    }
  }

  async function toLens(row: LensRow): Promise<Lens> {
    const draft = JSON.parse(row.draft) as LensDefinition
    const current = Number(row.current_version)
    const published = current > 0 ? await store.version(row.project_id, row.id, current) : undefined
    return {
      id: row.id,
      name: draft.name,
      description: draft.description,
      enabled: Boolean(row.enabled),
      status: current > 0 ? 'published' : 'draft',
      currentVersion: current,
      publishedVersion: current > 0 ? current : null,
      hasUnpublishedChanges: published === undefined || published.definition !== row.draft,
      ...definitionOut(draft),
      createdBy: row.created_by,
      createdAt: Number(row.created_at),
      updatedAt: Number(row.updated_at),
    }
  }

  /** The definition a render reads: the published version, or the draft. Throws conflict (never published, disabled). */
  async function definitionFor(
    row: LensRow,
    draft: boolean,
  ): Promise<{ definition: LensDefinition; version: number | null }> {
    if (draft) return { definition: JSON.parse(row.draft) as LensDefinition, version: null }
    if (!row.enabled) throw new AppError('conflict', 'This lens is disabled', { reason: 'disabled' })
    const current = Number(row.current_version)
    const version = current > 0 ? await store.version(row.project_id, row.id, current) : undefined
    if (!version)
      throw new AppError(
        'conflict',
        'This lens has no published version yet; publish it, or render the draft with draft=true',
        { reason: 'not_published' },
      )
    return { definition: JSON.parse(version.definition) as LensDefinition, version: current }
  }

  return {
    /** A page of the project's lenses, by name. Throws unauthorized, forbidden (system/lenses:read). */
    async list(actor: Principal, page: number, limit: number): Promise<{ data: Lens[]; total: number }> {
      await may(actor, 'read')
      const { rows, total } = await store.list(actor.projectId, page, limit)
      return { data: await Promise.all(rows.map(toLens)), total }
    },

    /** One lens, its draft at the top level. Throws forbidden, not_found (also another project's). */
    async get(actor: Principal, id: string): Promise<Lens> {
      await may(actor, 'read')
      return toLens(await rowOf(actor.projectId, id))
    },

    /** Saves a draft lens (nothing published). Throws forbidden, validation_error, collection_not_found, already_exists (name). */
    async create(actor: Principal, input: CreateLensInput): Promise<Lens> {
      await may(actor, 'create')
      const { enabled, ...rest } = input
      const definition = definitionOf(rest)
      await checkDefinition(actor, definition)
      const now = deps.clock.seconds()
      const row: LensRow = {
        id: newId(),
        project_id: actor.projectId,
        name: definition.name,
        enabled,
        draft: JSON.stringify(definition),
        current_version: 0,
        created_by: actor.userId,
        created_at: now,
        updated_at: now,
      }
      await store.insert(row)
      await deps.audit.record({
        projectId: actor.projectId,
        action: 'lens.created',
        actor,
        target: { type: 'lens', id: row.id },
        details: { name: row.name, collection: definition.collection },
      })
      return toLens(row)
    },

    /** Changes the draft (and enabled, which is not versioned); the published version is untouched. Throws forbidden, not_found, validation_error, already_exists. */
    async update(actor: Principal, id: string, input: UpdateLensInput): Promise<Lens> {
      await may(actor, 'update')
      const row = await rowOf(actor.projectId, id)
      const before = JSON.parse(row.draft) as LensDefinition
      const { enabled, filter, fields, ...rest } = input
      const merged: LensDefinition = { ...before }
      for (const [key, value] of Object.entries(rest))
        if (value !== undefined) (merged as unknown as Record<string, unknown>)[key] = value
      if (filter === null) delete merged.filter
      else if (filter !== undefined) merged.filter = filter
      if (fields === null) delete merged.fields
      else if (fields !== undefined) merged.fields = fields
      const definition = definitionOf(merged)
      const changes: LensChanges = {}
      if (enabled !== undefined) changes.enabled = enabled
      const draft = JSON.stringify(definition)
      if (draft !== row.draft) {
        await checkDefinition(actor, definition)
        changes.draft = draft
        changes.name = definition.name
      }
      if (Object.keys(changes).length === 0) return toLens(row)
      changes.updated_at = deps.clock.seconds()
      if (!(await store.update(actor.projectId, id, changes))) throw notFound()
      await deps.audit.record({
        projectId: actor.projectId,
        action: 'lens.updated',
        actor,
        target: { type: 'lens', id },
        details: { name: definition.name, changed: Object.keys(input) },
      })
      return toLens({ ...row, ...changes })
    },

    /** Deletes the lens and every version. Throws forbidden, not_found. */
    async delete(actor: Principal, id: string): Promise<void> {
      await may(actor, 'delete')
      const row = await rowOf(actor.projectId, id)
      if (!(await store.delete(actor.projectId, id))) throw notFound()
      await deps.deleted?.(actor.projectId, id)
      await deps.audit.record({
        projectId: actor.projectId,
        action: 'lens.deleted',
        actor,
        target: { type: 'lens', id },
        details: { name: row.name },
      })
    },

    /**
     * Freezes the draft as the next version, which render uses from now on (checked again as the publisher).
     * Throws forbidden (system/lenses:update), not_found, validation_error, conflict (a concurrent publish).
     */
    async publish(actor: Principal, id: string, changeSummary: string): Promise<Lens> {
      await may(actor, 'update')
      const row = await rowOf(actor.projectId, id)
      const definition = JSON.parse(row.draft) as LensDefinition
      await checkDefinition(actor, definition)
      const now = deps.clock.seconds()
      const version = await store.publish(actor.projectId, id, Number(row.current_version), {
        definition: row.draft,
        change_summary: changeSummary,
        published_by: actor.userId,
        created_at: now,
      })
      if (version === null)
        throw new AppError('conflict', 'The lens was published or deleted meanwhile; read it and try again')
      await store.update(actor.projectId, id, { updated_at: now })
      await deps.audit.record({
        projectId: actor.projectId,
        action: 'lens.published',
        actor,
        target: { type: 'lens', id },
        details: { name: definition.name, version },
      })
      return toLens({ ...row, current_version: version, updated_at: now })
    },

    /** Every published version, newest first. Throws forbidden, not_found. */
    async versions(actor: Principal, id: string): Promise<LensVersion[]> {
      await may(actor, 'read')
      await rowOf(actor.projectId, id)
      return (await store.versions(actor.projectId, id)).map(toVersion)
    },

    /**
     * Renders the published version (the draft with `draft`, which needs system/lenses:update) as the
     * caller: its rows and columns are those the caller may read through the records service. Throws
     * forbidden, not_found, conflict (disabled, never published), invalid_request (parameters, a filter
     * the caller may not use), collection_not_found, limit_exceeded (output too long).
     */
    async render(actor: Principal, id: string, input: RenderInput & { draft?: boolean }): Promise<Rendered> {
      await may(actor, 'read')
      if (input.draft) await may(actor, 'update')
      const row = await rowOf(actor.projectId, id)
      const { definition, version } = await definitionFor(row, input.draft === true)
      return renderer.render(actor, { id: row.id, version, definition }, input)
    },

    store,
  }
}

export type LensesService = ReturnType<typeof createLensesService>

/**
 * The definition's fields in one fixed order (so equal drafts are equal JSON). Create and update both
 * come through here before anything walks the filter: its bounds are checked first (validation_error).
 */
function definitionOf(input: LensDefinition): LensDefinition {
  checkLensFilterBounds(input.filter)
  const out: LensDefinition = {
    name: input.name,
    description: input.description,
    collection: input.collection,
    sort: input.sort,
    limit: input.limit,
    params: input.params,
    template: {
      ...(input.template.html === undefined ? {} : { html: input.template.html }),
      ...(input.template.md === undefined ? {} : { md: input.template.md }),
    },
  }
  if (input.filter !== undefined) out.filter = input.filter
  if (input.fields !== undefined) out.fields = input.fields
  return out
}

function definitionOut(definition: LensDefinition) {
  return {
    collection: definition.collection,
    filter: definition.filter ?? null,
    sort: definition.sort,
    fields: definition.fields ?? null,
    limit: definition.limit,
    params: definition.params,
    template: definition.template,
  }
}

function toVersion(row: LensVersionRow): LensVersion {
  const definition = JSON.parse(row.definition) as LensDefinition
  return {
    version: Number(row.version),
    name: definition.name,
    description: definition.description,
    ...definitionOut(definition),
    changeSummary: row.change_summary,
    publishedBy: row.published_by,
    publishedAt: Number(row.created_at),
  }
}
