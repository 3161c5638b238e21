export { createS3Probe, type Probe, type ProbeResult, type S3Target } from './probe.js'
export { storageConnectionsRoutes } from './routes.js'
export {
  createStorageConnectionsService,
  type BucketStorage,
  type ConnectionUsage,
  type StorageConnection,
  type StorageConnectionsService,
} from './service.js'
export { createStorageConnectionsModule } from './module.js'
export { BucketError, openBucket, type Bucket, type BucketObject } from './bucket.js'
