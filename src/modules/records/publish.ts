import type { Principal } from '../../lib/principal.js'
import type { CollectionsService, PublishResult } from '../collections/index.js'
import type { RecordAccess } from './access.js'

/** Who may publish: a caller who may write records of the collection in some way (decision 036). */
const writeActions = ['create', 'update', 'delete'] as const

/**
 * POST /collections/:name/publish: an r2_sql collection's unpublished writes go to object storage now
 * rather than at the next schedule tick. It changes no record, only when others see them, so anyone who
 * may write records there (create, update or delete, any row scope) may ask; a reader may not.
 */
export function createPublish(deps: {
  collections: Pick<CollectionsService, 'find' | 'get' | 'publishFile'>
  recordAccess: Pick<RecordAccess, 'scope' | 'refuse' | 'anonymousMay'>
}) {
  return {
    /** Throws unauthorized, forbidden, collection_not_found, invalid_request (not r2_sql), conflict, service_unavailable. */
    async publish(principal: Principal, name: string): Promise<PublishResult> {
      const collection = await deps.collections.find(principal.projectId, name)
      if (!collection) {
        if (!(await deps.recordAccess.anonymousMay(principal, null, name, 'update')))
          deps.recordAccess.refuse(principal, name, 'update')
        await deps.collections.get(principal.projectId, name) // throws collection_not_found
      }
      for (const action of writeActions) {
        if ((await deps.recordAccess.scope(principal, collection!, action)).allowed)
          return deps.collections.publishFile(collection!)
      }
      deps.recordAccess.refuse(principal, collection!.name, 'update')
    },
  }
}

export type Publish = ReturnType<typeof createPublish>
