import type { Clock } from '../clock.js'
import { createLocalStorage, type LocalStorage } from './local.js'
import { createS3Storage, type S3Storage } from './s3.js'

export type { ObjectStorage, StoredObject } from './types.js'
export { createLocalStorage, type LocalStorage, type LocalStorageOptions, type OpenedObject } from './local.js'
export { createS3Storage, type S3Storage, type S3StorageOptions } from './s3.js'
export { checkKey, checkPrefix, maxKeyBytes } from './keys.js'
export { checkContentType, sameContentType } from './content-type.js'
export { contentDisposition } from './disposition.js'
export { maxExpiresIn, signedObjectPath, type GetGrant, type PutGrant, type SignedGrant, type SignedQuery } from './signed-url.js'

/** Where files go, as config.ts reads it from the S3_* settings (`config.storage`). */
export type StorageSettings =
  | { readonly kind: 'local' }
  | {
      readonly kind: 's3'
      readonly endpoint: string
      readonly bucket: string
      readonly accessKeyId: string
      readonly secretAccessKey: string
      readonly region: string
    }

export interface StorageOptions {
  settings: StorageSettings
  /** DATA_DIR, for the local driver. */
  dataDir: string
  /** PUBLIC_URL, where the local driver's signed URLs point. */
  publicUrl: string
  /** SECRET_KEY, which signs the local driver's URLs. */
  secretKey: string
  clock?: Clock
}

/** The S3 driver when S3_ENDPOINT is set, the local one otherwise. Throws internal when the secret key is short. */
export function createStorage(options: StorageOptions): LocalStorage | S3Storage {
  const { settings, clock } = options
  if (settings.kind === 's3') {
    const { endpoint, bucket, accessKeyId, secretAccessKey, region } = settings
    return createS3Storage({ endpoint, bucket, accessKeyId, secretAccessKey, region, clock })
  }
  return createLocalStorage({ dataDir: options.dataDir, publicUrl: options.publicUrl, secretKey: options.secretKey, clock })
}
