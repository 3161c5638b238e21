import type { CollectionsService } from '../collections/index.js'
import { heldValues } from './data-store.js'

/**
 * Which of these file ids a record of the project still holds in a `file` field: any collection, soft-deleted
 * records included (they can be restored, and would then point at nothing). The files module asks before it
 * removes a file with a record or a collection (app.ts passes this to the files module). Throws what the database throws (a binding
 * that cannot be reached): the files module then keeps the files.
 */
export function createFileReferences(collections: Pick<CollectionsService, 'list' | 'handleOf'>) {
  return async function referencedFiles(projectId: string, ids: readonly string[]): Promise<Set<string>> {
    const held = new Set<string>()
    for (const collection of await collections.list(projectId)) {
      const columns = collection.fields.filter((f) => f.type === 'file').map((f) => f.name)
      const open = ids.filter((id) => !held.has(id))
      if (open.length === 0) break
      if (columns.length === 0) continue
      const handle = await collections.handleOf(collection)
      for (const id of await heldValues(handle, collection, columns, open)) held.add(id)
    }
    return held
  }
}

export type FileReferences = ReturnType<typeof createFileReferences>
