import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import { resourcePublisher, type EventBus, type ResourceEvents } from '../../lib/events/index.js'
import { AppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import type { CollectionsService } from '../collections/index.js'
import type { LensesService } from '../lenses/index.js'
import type { CreateLensAttachmentInput, LensAttachment, UpdateLensAttachmentInput } from './schemas.js'
import { createLensAttachmentsStore, type LensAttachmentChanges, type LensAttachmentRow } from './store.js'

export interface LensAttachmentsDeps {
  systemDb: Kysely<any>
  clock: Clock
  access: Pick<AccessService, 'authorize'>
  audit: Pick<AuditService, 'record'>
  /** Whether a lens exists in a project (its store, read by project: another project's id is never found). */
  lenses: { store: Pick<LensesService['store'], 'byId'> }
  collections: Pick<CollectionsService, 'find'>
  /** lens_attachment.create, lens_attachment.update, lens_attachment.delete (docs/events.md). */
  events: EventBus<LensAttachmentEvents>
}

export type LensAttachmentEvents = ResourceEvents<'lens_attachment', LensAttachment>

export const LENS_ATTACHMENTS_RESOURCE = 'system/lens-attachments'
const notFound = () => new AppError('not_found', 'Lens attachment not found')

/** Lens attachments (docs/renderers.md, decision 065): which lens a collection offers on a record or a list. */
export function createLensAttachmentsService(deps: LensAttachmentsDeps) {
  const store = createLensAttachmentsStore(deps.systemDb)
  const may = (actor: Principal, action: 'read' | 'create' | 'update' | 'delete') =>
    deps.access.authorize(actor, `${LENS_ATTACHMENTS_RESOURCE}:${action}`)
  const publish = resourcePublisher(deps.events, 'lens_attachment', deps.clock)

  async function rowOf(projectId: string, id: string): Promise<LensAttachmentRow> {
    const row = await store.byId(projectId, id)
    if (!row) throw notFound()
    return row
  }

  const lensExists = async (projectId: string, lensId: string) =>
    (await deps.lenses.store.byId(projectId, lensId)) !== undefined

  return {
    /** A page of attachments (by collection, placement, label), optionally of one collection. Throws unauthorized, forbidden. */
    async list(
      actor: Principal,
      page: number,
      limit: number,
      collection?: string,
    ): Promise<{ data: LensAttachment[]; total: number }> {
      await may(actor, 'read')
      const { rows, total } = await store.list(actor.projectId, page, limit, collection)
      return { data: rows.map(toAttachment), total }
    },

    /** One attachment. Throws forbidden, not_found (also another project's). */
    async get(actor: Principal, id: string): Promise<LensAttachment> {
      await may(actor, 'read')
      return toAttachment(await rowOf(actor.projectId, id))
    },

    /**
     * Attaches a lens of this project to a collection of it. Throws forbidden, validation_error (`lensId`:
     * no such lens in the project; `collection`: no such collection), already_exists (that lens is already
     * offered there).
     */
    async create(actor: Principal, input: CreateLensAttachmentInput): Promise<LensAttachment> {
      await may(actor, 'create')
      if (!(await lensExists(actor.projectId, input.lensId)))
        throw new AppError('validation_error', 'lensId: no lens of this project has that id', { at: 'lensId' })
      if (!(await deps.collections.find(actor.projectId, input.collection)))
        throw new AppError('validation_error', `collection: no collection named "${input.collection}"`, {
          at: 'collection',
        })
      const now = deps.clock.seconds()
      const row: LensAttachmentRow = {
        id: newId(),
        project_id: actor.projectId,
        lens_id: input.lensId,
        collection: input.collection,
        placement: input.placement,
        label: input.label,
        created_by: actor.userId,
        created_at: now,
        updated_at: now,
      }
      await store.insert(row)
      // A lens deleted between the check and the insert told nobody about this row: undo it.
      if (!(await lensExists(actor.projectId, input.lensId))) {
        await store.delete(actor.projectId, row.id)
        throw new AppError('validation_error', 'lensId: no lens of this project has that id', { at: 'lensId' })
      }
      await deps.audit.record({
        projectId: actor.projectId,
        action: 'lens_attachment.created',
        actor,
        target: { type: 'lens_attachment', id: row.id },
        details: { lensId: row.lens_id, collection: row.collection, placement: row.placement },
      })
      const attachment = toAttachment(row)
      publish(actor, row.id, null, attachment)
      return attachment
    },

    /** Changes the label or placement. Throws forbidden, not_found, already_exists. */
    async update(actor: Principal, id: string, input: UpdateLensAttachmentInput): Promise<LensAttachment> {
      await may(actor, 'update')
      const row = await rowOf(actor.projectId, id)
      const changes: LensAttachmentChanges = {}
      if (input.label !== undefined && input.label !== row.label) changes.label = input.label
      if (input.placement !== undefined && input.placement !== row.placement) changes.placement = input.placement
      if (Object.keys(changes).length === 0) return toAttachment(row)
      changes.updated_at = deps.clock.seconds()
      if (!(await store.update(actor.projectId, id, changes))) throw notFound()
      await deps.audit.record({
        projectId: actor.projectId,
        action: 'lens_attachment.updated',
        actor,
        target: { type: 'lens_attachment', id },
        details: { changed: Object.keys(changes).filter((k) => k !== 'updated_at') },
      })
      const attachment = toAttachment({ ...row, ...changes })
      publish(actor, id, toAttachment(row), attachment)
      return attachment
    },

    /** Detaches. Throws forbidden, not_found. */
    async delete(actor: Principal, id: string): Promise<void> {
      await may(actor, 'delete')
      const row = await rowOf(actor.projectId, id)
      if (!(await store.delete(actor.projectId, id))) throw notFound()
      await deps.audit.record({
        projectId: actor.projectId,
        action: 'lens_attachment.deleted',
        actor,
        target: { type: 'lens_attachment', id },
        details: { lensId: row.lens_id, collection: row.collection },
      })
      publish(actor, id, toAttachment(row), null)
    },

    /** Removes a deleted lens's attachments (the lenses module's onDeleted). */
    async removeLens(projectId: string, lensId: string): Promise<void> {
      await store.deleteForLens(projectId, lensId)
    },

    /** Removes the attachments of removed collections (the collections module's onRemoved). */
    async removeCollections(projectId: string, names: readonly string[]): Promise<void> {
      await store.deleteForCollections(projectId, names)
    },
  }
}

export type LensAttachmentsService = ReturnType<typeof createLensAttachmentsService>

function toAttachment(row: LensAttachmentRow): LensAttachment {
  return {
    id: row.id,
    lensId: row.lens_id,
    collection: row.collection,
    placement: row.placement as LensAttachment['placement'],
    label: row.label,
    createdBy: row.created_by,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  }
}
