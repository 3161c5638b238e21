import type { S3Client } from '@aws-sdk/client-s3'
import type { Clock } from '../clock.js'
import { createLocalStorage, type LocalStorage } from './local.js'
import type { S3ClientStorageOptions, S3Storage } from './s3.js'

export type { ObjectStorage, StoredObject } from './types.js'
export { createLocalStorage, type LocalStorage, type LocalStorageOptions, type OpenedObject } from './local.js'
// The S3 driver loads the AWS SDK (~10 MB resident): only a server that uses it pays for it.
export type { S3ClientStorageOptions, S3Storage, S3StorageOptions } from './s3.js'
export { checkKey, checkPrefix, maxKeyBytes } from './keys.js'
export { checkContentType, sameContentType } from './content-type.js'
export { contentDisposition } from './disposition.js'
export {
  maxExpiresIn,
  signedObjectPath,
  type GetGrant,
  type PutGrant,
  type SignedGrant,
  type SignedQuery,
} from './signed-url.js'

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
      readonly publicEndpoint?: string | null
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
export async function createStorage(options: StorageOptions): Promise<LocalStorage | S3Storage> {
  const { settings, clock } = options
  if (settings.kind === 's3') {
    const { endpoint, publicEndpoint, bucket, accessKeyId, secretAccessKey, region } = settings
    const { createS3Storage } = await import('./s3.js')
    return createS3Storage({ endpoint, publicEndpoint, bucket, accessKeyId, secretAccessKey, region, clock })
  }
  return createLocalStorage({
    dataDir: options.dataDir,
    publicUrl: options.publicUrl,
    secretKey: options.secretKey,
    clock,
  })
}

/** The S3 driver over a client built elsewhere (its agents, timeouts and error words are the caller's); loads the driver on first use. */
export async function createS3StorageOnClient(client: S3Client, options: S3ClientStorageOptions): Promise<S3Storage> {
  const { createS3StorageOn } = await import('./s3.js')
  return createS3StorageOn(client, options)
}
