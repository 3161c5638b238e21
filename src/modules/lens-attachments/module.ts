import type { AppModule } from '../../lib/module.js'
import type { Observers } from '../../lib/observers.js'
import type { Principal } from '../../lib/principal.js'
import { lensAttachmentsRoutes } from './routes.js'
import { createLensAttachmentsService, type LensAttachmentsDeps } from './service.js'

export interface LensAttachmentsModuleDeps extends LensAttachmentsDeps {
  /** The lenses module's onDeleted: an attachment goes with its lens. */
  deletedLenses: Pick<Observers<[projectId: string, lensId: string]>, 'add'>
  /** The collections module's onRemoved: an attachment goes with its collection. */
  removedCollections: Observers<[actor: Principal, projectId: string, names: readonly string[]]>
}

/** Lens attachments: which lens a collection offers on a record or a list (docs/renderers.md). */
export function createLensAttachmentsModule(deps: LensAttachmentsModuleDeps) {
  const service = createLensAttachmentsService(deps)
  deps.deletedLenses.add(async (projectId, lensId) => service.removeLens(projectId, lensId))
  deps.removedCollections.add(async (_actor, projectId, names) => service.removeCollections(projectId, names))
  return {
    service,
    routers: ({ security }) => [lensAttachmentsRoutes(service, security)],
  } satisfies AppModule
}
