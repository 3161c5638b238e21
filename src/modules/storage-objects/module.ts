import type { LocalStorage, S3Storage } from '../../lib/storage/index.js'
import type { AppModule } from '../../lib/module.js'
import { storageObjectRoutes } from './routes.js'

/** The local driver's signed URLs; an S3-compatible store serves its own, so then there is nothing to mount. */
export function createStorageObjectsModule(storage: LocalStorage | S3Storage) {
  return {
    streamingRouters: () => (storage.kind === 'local' ? [storageObjectRoutes(storage)] : []),
  } satisfies AppModule
}
