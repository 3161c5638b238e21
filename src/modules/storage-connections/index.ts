export { createS3Probe, type Probe, type ProbeResult, type S3Target } from './probe.js'
export { storageConnectionsRoutes } from './routes.js'
export { createStorageConnectionsService, type StorageConnection, type StorageConnectionsService } from './service.js'
export { createStorageConnectionsModule } from './module.js'
