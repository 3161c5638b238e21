import { z } from '../../lib/http/index.js'

/** The query a signed object URL carries; the signature is checked in lib/storage, not here (any mismatch is 403). */
export const SignedPutQuery = z.object({
  key: z
    .string()
    .optional()
    .openapi({ description: 'Object key, e.g. projects/<projectId>/<fileId>', example: 'projects/p1/f1' }),
  expires: z.string().optional().openapi({ description: 'Unix seconds after which the URL is refused' }),
  size: z.string().optional().openapi({ description: 'Exact body size in bytes the URL was signed for' }),
  type: z.string().optional().openapi({ description: 'Content-Type the URL was signed for' }),
  sig: z.string().optional().openapi({ description: 'HMAC-SHA256 of the other parameters (base64url)' }),
})

export const SignedGetQuery = z.object({
  key: z.string().optional().openapi({ description: 'Object key' }),
  expires: z.string().optional().openapi({ description: 'Unix seconds after which the URL is refused' }),
  type: z.string().optional().openapi({ description: 'Content-Type to answer with (signed)' }),
  name: z.string().optional().openapi({ description: 'File name for Content-Disposition (signed)' }),
  sig: z.string().optional().openapi({ description: 'HMAC-SHA256 of the other parameters (base64url)' }),
})
