import { z } from '../../lib/http/index.js'

/** The wire shapes of /api/v1/storage-connections; they feed validation and the OpenAPI document. */

export const providers = ['r2', 's3', 'minio'] as const

export const StorageConnectionSchema = z
  .object({
    id: z.string(),
    label: z.string(),
    provider: z.enum(providers),
    endpoint: z.string().openapi({ description: 'S3-compatible endpoint URL' }),
    region: z.string(),
    bucketName: z.string(),
    accessKeyId: z.string(),
    createdAt: z.number().int().openapi({ description: 'Unix seconds' }),
    updatedAt: z.number().int().openapi({ description: 'Unix seconds' }),
  })
  .openapi('StorageConnection', {
    description: 'A connection profile; the secret key is write-only and never returned',
  })

export const ConnectionTestSchema = z
  .object({
    success: z.boolean(),
    message: z.string(),
    reason: z
      .enum([
        'blocked_address',
        'unreachable',
        'timeout',
        'tls_error',
        'invalid_credentials',
        'access_denied',
        'bucket_not_found',
        'wrong_region',
        'unexpected_response',
      ])
      .optional()
      .openapi({ description: 'Why the test failed (absent on success)' }),
    remoteStatus: z
      .number()
      .int()
      .nullable()
      .optional()
      .openapi({ description: 'HTTP status the store answered with, if it answered' }),
    remoteCode: z
      .string()
      .nullable()
      .optional()
      .openapi({ description: 'S3 error code the store answered with, if any' }),
  })
  .openapi('StorageConnectionTest')

const label = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters')
const endpoint = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .refine(isEndpointUrl, 'must be an http:// or https:// URL without credentials, query or fragment')
  .openapi({ example: 'https://<account>.r2.cloudflarestorage.com' })
const region = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'must be 1-64 letters, digits, - or _ (or auto)')
// Current S3 rules plus the legacy upper case and underscores some older buckets still carry.
const bucketName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{1,253}[A-Za-z0-9]$/,
    'must be 3-255 letters, digits, ., - or _, starting and ending with a letter or digit',
  )
const accessKeyId = z.string().regex(/^[\x21-\x7e]{1,256}$/, 'must be 1-256 printable characters without spaces')
const secretKey = z
  .string()
  .min(1, 'must not be empty (omit it to keep the stored one)')
  .max(1024, 'must be at most 1024 characters')
  .openapi({ description: 'Write-only: encrypted at rest, never returned', format: 'password' })

export const CreateConnectionSchema = z.strictObject({
  label,
  provider: z.enum(providers).default('s3'),
  endpoint,
  region: region.default('auto'),
  bucketName,
  accessKeyId,
  secretKey,
})

export const UpdateConnectionSchema = z.strictObject({
  label: label.optional(),
  provider: z.enum(providers).optional(),
  endpoint: endpoint.optional(),
  region: region.optional(),
  bucketName: bucketName.optional(),
  accessKeyId: accessKeyId.optional(),
  secretKey: secretKey.optional(),
})

export type CreateConnectionInput = z.infer<typeof CreateConnectionSchema>
export type UpdateConnectionInput = z.infer<typeof UpdateConnectionSchema>

/** An http(s) URL with a host and nothing that could carry credentials or be lost (userinfo, query, fragment). */
export function isEndpointUrl(value: string): boolean {
  if (!URL.canParse(value)) return false
  const url = new URL(value)
  return (
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.hostname !== '' &&
    url.username === '' &&
    url.password === '' &&
    url.search === '' &&
    url.hash === '' &&
    !value.includes('?') &&
    !value.includes('#')
  )
}
