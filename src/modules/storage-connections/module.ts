import { createSecretBox } from '../../lib/crypto/index.js'
import type { AppModule } from '../../lib/module.js'
import { createS3Probe } from './probe.js'
import { storageConnectionsRoutes } from './routes.js'
import { createStorageConnectionsService, type StorageConnectionsDeps } from './service.js'

/** S3-compatible connection profiles of a project; secret keys sealed under SECRET_KEY. */
export function createStorageConnectionsModule(
  deps: Omit<StorageConnectionsDeps, 'box' | 'probe'> & { secretKey: string },
) {
  const { secretKey, ...rest } = deps
  const service = createStorageConnectionsService({
    ...rest,
    box: createSecretBox(secretKey, 'storage-connections'),
    probe: createS3Probe({ allowPrivateNetwork: deps.allowPrivateNetwork }),
  })
  return {
    service,
    routers: ({ security }) => [storageConnectionsRoutes(service, security)],
    close: () => service.close(),
  } satisfies AppModule
}
