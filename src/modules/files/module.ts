import type { AppModule } from '../../lib/module.js'
import type { Observers } from '../../lib/observers.js'
import type { Principal } from '../../lib/principal.js'
import type { ContainersService } from '../containers/index.js'
import type { StorageConnectionsService } from '../storage-connections/index.js'
import type { FilesDeps } from './context.js'
import { filesRoutes, filesStreamingRoutes } from './routes.js'
import { createFilesService } from './service.js'

/**
 * Files on object storage: uploads (multipart routes bound their own bodies, so they are streaming
 * routers), downloads, variants and the cleanup sweep. The files of removed collections are settled here,
 * through the collections module's `onRemoved`, registered at construction.
 */
export function createFilesModule(
  deps: FilesDeps & {
    removedCollections: Observers<[actor: Principal, projectId: string, names: readonly string[]]>
    containers?: Pick<ContainersService, 'rulesOf' | 'addUsage'>
    storageConnections?: Pick<StorageConnectionsService, 'bucketStorage' | 'addUsage'>
  },
) {
  const { removedCollections, containers, storageConnections, ...rest } = deps
  const service = createFilesService({
    ...rest,
    ...(containers ? { containerRules: containers.rulesOf } : {}),
    ...(storageConnections ? { bucketStorage: storageConnections.bucketStorage } : {}),
  })
  removedCollections.add((actor, projectId, names) => service.removeOfCollections(actor, projectId, names))
  // A container files were uploaded into is not deleted under them (decision 066), nor a connection files
  // keep their bytes on (decision 067).
  containers?.addUsage((projectId, id) => service.countInContainer(projectId, id))
  storageConnections?.addUsage((projectId, id) => service.countOnConnection(projectId, id))
  return {
    service,
    routers: ({ security }) => [filesRoutes(service, security)],
    streamingRouters: ({ security }) => [filesStreamingRoutes(service, security)],
    close: () => service.close(),
  } satisfies AppModule
}
