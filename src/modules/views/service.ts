import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import { AppError } from '../../lib/errors.js'
import { resourcePublisher, type EventBus, type ResourceEvents } from '../../lib/events/index.js'
import { newId } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import type { AuditAction, AuditService } from '../audit/index.js'
import type { RecordsService } from '../records/index.js'
import { checkView } from './check.js'
import { viewLimits, type CreateViewInput, type UpdateViewInput, type View, type ViewDefinition } from './schemas.js'
import { createViewsStore, type ViewChanges, type ViewRow } from './store.js'

export interface ViewsDeps {
  systemDb: Kysely<any>
  clock: Clock
  access: Pick<AccessService, 'authorize' | 'decide'>
  audit: Pick<AuditService, 'record'>
  /** Saves are checked and lists are read through the records service as the caller, never as the view's author. */
  records: Pick<RecordsService, 'list'>
  /** view.create, view.update, view.delete: writes of shared views (docs/events.md). */
  events: EventBus<ViewEvents>
}

export type ViewEvents = ResourceEvents<'view', View>

export const VIEWS_RESOURCE = 'system/views'
const notFound = () => new AppError('not_found', 'View not found')

/** What the caller adds to a view's listing: paging, a filter ANDed with the view's, another order. */
export interface ViewRecordsQuery {
  page: number
  limit?: number
  cursor?: string
  filter?: string
  sortBy?: string
  order?: 'asc' | 'desc'
}

/**
 * Saved views (docs/views.md, decision 063). read: list and get the shared views and one's own, and list
 * records through them; create: keep personal views (create, change and delete one's own); a shared view
 * (making one, sharing or unsharing, changing one) needs update, deleting one needs delete.
 */
export function createViewsService(deps: ViewsDeps) {
  const store = createViewsStore(deps.systemDb)
  const may = (actor: Principal, action: 'read' | 'create' | 'update' | 'delete') =>
    deps.access.authorize(actor, `${VIEWS_RESOURCE}:${action}`)

  /** A view the caller sees; another user's personal view and another project's are missing alike. */
  async function rowOf(actor: Principal, id: string): Promise<ViewRow> {
    const row = await store.visibleById(actor.projectId, actor.userId, id)
    if (!row) throw notFound()
    return row
  }

  /** A personal view's owner keeps it with create; a shared one takes `action` (update or delete). */
  async function mayChange(actor: Principal, row: ViewRow, action: 'update' | 'delete'): Promise<void> {
    if (row.shared) await may(actor, action)
    else await may(actor, 'create')
  }

  const publishEvent = resourcePublisher(deps.events, 'view', deps.clock)
  /** A personal view is its owner's alone: only a write that a shared view is on either side of is published. */
  const publish = (actor: Principal, id: string, before: View | null, after: View | null) => {
    if (before?.shared || after?.shared) publishEvent(actor, id, before, after)
  }

  async function audit(actor: Principal, action: AuditAction, id: string, details: Record<string, unknown>) {
    await deps.audit.record({ projectId: actor.projectId, action, actor, target: { type: 'view', id }, details })
  }

  return {
    /** A page of the views the caller sees, by name (one collection's with `collection`). Throws unauthorized, forbidden. */
    async list(
      actor: Principal,
      page: number,
      limit: number,
      filter: { collection?: string } = {},
    ): Promise<{ data: View[]; total: number }> {
      await may(actor, 'read')
      const { rows, total } = await store.list(actor.projectId, actor.userId, filter, page, limit)
      return { data: rows.map(toView), total }
    },

    /** One view. Throws unauthorized, forbidden, not_found (another project's, another user's personal one). */
    async get(actor: Principal, id: string): Promise<View> {
      await may(actor, 'read')
      return toView(await rowOf(actor, id))
    },

    /** The collection of a view the caller sees (for a navigation item naming it), else null: never throws forbidden. */
    async collectionOf(actor: Principal, id: string): Promise<string | null> {
      if (!(await deps.access.decide(actor, `${VIEWS_RESOURCE}`, 'read')).allowed) return null
      return (await store.visibleById(actor.projectId, actor.userId, id))?.collection ?? null
    },

    /**
     * Saves a view, checked as the caller against the collection. Throws unauthorized, forbidden (create;
     * update for a shared one), invalid_request (a personal view needs a user), validation_error, already_exists.
     */
    async create(actor: Principal, input: CreateViewInput): Promise<View> {
      await may(actor, 'create')
      if (input.shared) await may(actor, 'update')
      else if (actor.userId === null)
        throw new AppError(
          'invalid_request',
          'A personal view belongs to a user; a service key may save shared views only',
        )
      const definition = definitionOf(input)
      await checkView(deps.records, actor, input.collection, definition)
      const now = deps.clock.seconds()
      const row: ViewRow = {
        id: newId(),
        project_id: actor.projectId,
        collection: input.collection,
        name: input.name,
        shared: input.shared,
        owner_id: actor.userId,
        name_scope: scopeOf(input.shared, actor.userId),
        definition: JSON.stringify(definition),
        created_at: now,
        updated_at: now,
      }
      await store.insert(row)
      await audit(actor, 'view.created', row.id, { name: row.name, collection: row.collection, shared: input.shared })
      const view = toView(row)
      publish(actor, row.id, null, view)
      return view
    },

    /**
     * Changes a view (the collection stays). Throws unauthorized, forbidden (create for one's own personal
     * view; update for a shared one, or to share or unshare), not_found, validation_error, already_exists.
     */
    async update(actor: Principal, id: string, input: UpdateViewInput): Promise<View> {
      await may(actor, 'read')
      const row = await rowOf(actor, id)
      await mayChange(actor, row, 'update')
      const shared = input.shared ?? Boolean(row.shared)
      if (shared !== Boolean(row.shared)) {
        await may(actor, 'update')
        // Unsharing makes the view its owner's; a view nobody owns (a service key's) cannot be.
        if (!shared && row.owner_id === null)
          throw new AppError('invalid_request', 'This shared view has no owner to keep it personal')
      }
      const before = JSON.parse(row.definition) as ViewDefinition
      const definition = definitionOf({ ...before, ...dropUndefined(input) })
      const changes: ViewChanges = {}
      const text = JSON.stringify(definition)
      if (text !== row.definition) {
        await checkView(deps.records, actor, row.collection, definition)
        changes.definition = text
      }
      if (input.name !== undefined && input.name !== row.name) changes.name = input.name
      if (shared !== Boolean(row.shared)) changes.shared = shared
      if (Object.keys(changes).length === 0) return toView(row)
      changes.name_scope = scopeOf(shared, row.owner_id)
      changes.updated_at = deps.clock.seconds()
      if (!(await store.update(actor.projectId, id, changes))) throw notFound()
      await audit(actor, 'view.updated', id, { name: changes.name ?? row.name, changed: Object.keys(input) })
      const view = toView({ ...row, ...changes })
      publish(actor, id, toView(row), view)
      return view
    },

    /** Deletes a view. Throws unauthorized, forbidden (create for one's own personal view, delete for a shared one), not_found. */
    async delete(actor: Principal, id: string): Promise<void> {
      await may(actor, 'read')
      const row = await rowOf(actor, id)
      await mayChange(actor, row, 'delete')
      if (!(await store.delete(actor.projectId, id))) throw notFound()
      await audit(actor, 'view.deleted', id, { name: row.name, collection: row.collection })
      publish(actor, id, toView(row), null)
    },

    /**
     * A page of the view's collection through the records list as the caller: the caller's row and column
     * rules apply on top of the view's filter (a filter, sort or search on a field the caller may not read is
     * refused, a column it may not read is left out). Throws unauthorized, forbidden, not_found,
     * invalid_request, collection_not_found.
     */
    async records(actor: Principal, id: string, query: ViewRecordsQuery): ReturnType<RecordsService['list']> {
      await may(actor, 'read')
      const row = await rowOf(actor, id)
      const view = JSON.parse(row.definition) as ViewDefinition
      const sortBy = query.sortBy ?? view.sortBy ?? undefined
      return deps.records.list(actor, row.collection, {
        page: query.page,
        limit: query.limit ?? view.limit,
        ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
        ...(view.filter === null ? {} : { baseFilter: JSON.stringify(view.filter) }),
        ...(query.filter === undefined ? {} : { filter: query.filter }),
        ...(sortBy === undefined ? {} : { sortBy }),
        // A view's sortBy reads as a person writes it: ascending unless it starts with -.
        ...(sortBy === undefined ? {} : { order: query.order ?? 'asc' }),
        ...(view.search === null ? {} : { search: view.search }),
        ...(view.fields === null ? {} : { fields: view.fields.join(',') }),
      })
    },

    /** Removes the views of removed collections (the collections module's onRemoved). */
    removeCollections: (projectId: string, names: readonly string[]) => store.removeCollections(projectId, names),
  }
}

export type ViewsService = ReturnType<typeof createViewsService>

const scopeOf = (shared: boolean, ownerId: string | null) => (shared ? 'shared' : `user:${ownerId ?? ''}`)

function dropUndefined<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<T>
}

/** The definition's parts in one fixed order with their defaults, so equal views are equal JSON. */
function definitionOf(
  input: Partial<ViewDefinition> & Omit<Partial<CreateViewInput>, keyof ViewDefinition>,
): ViewDefinition {
  return {
    filter: input.filter ?? null,
    sortBy: input.sortBy ?? null,
    fields: input.fields ?? null,
    limit: input.limit ?? viewLimits.defaultLimit,
    search: input.search ?? null,
    layout: input.layout ?? 'table',
    layoutOptions: input.layoutOptions ?? {},
  }
}

function toView(row: ViewRow): View {
  const definition = JSON.parse(row.definition) as ViewDefinition
  return {
    id: row.id,
    name: row.name,
    collection: row.collection,
    shared: Boolean(row.shared),
    ownerId: row.owner_id,
    ...definition,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  }
}
