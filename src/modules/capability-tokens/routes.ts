import {
  createRouter,
  dataEnvelope,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonContent,
  principalOf,
  z,
  type Security,
} from '../../lib/http/index.js'
import { defaultExpiresIn, maxExpiresIn, minExpiresIn, type CapabilityTokensService } from './service.js'
import { capabilities } from './token.js'

const tags = ['Capability tokens']

const MintBody = z
  .object({
    collection: z
      .string()
      .min(1)
      .max(100)
      .openapi({ description: 'The collection holding the record', example: 'docs' }),
    documentId: z.string().min(1).max(100).openapi({ description: 'The record id' }),
    capability: z.enum(capabilities).optional().openapi({ description: 'read (default), comment or write' }),
    expiresIn: z
      .number()
      .int()
      .optional()
      .openapi({
        description: `Requested lifetime in seconds, clamped to ${minExpiresIn}-${maxExpiresIn}; default ${defaultExpiresIn}`,
      }),
  })
  .openapi('CapabilityTokenRequest')

const CapabilityTokenSchema = z
  .object({
    token: z.string().openapi({ description: 'Prefixed sct1.; returned once, never stored or logged' }),
    capability: z.enum(capabilities),
    document: z.object({ collection: z.string(), id: z.string(), type: z.literal('record') }),
    subject: z.string().openapi({ description: 'User id of the caller' }),
    issuedAt: z.number().int(),
    expiresAt: z.number().int(),
    expiresIn: z.number().int().openapi({ description: 'Granted lifetime in seconds' }),
    maxExpiresIn: z.number().int().openapi({ example: maxExpiresIn }),
  })
  .openapi('CapabilityToken')

const mint = defineRoute({
  method: 'post',
  path: '/api/v1/capability-tokens',
  operationId: 'capabilityTokens.create',
  summary: 'A short-lived signed token for one record (read, comment or write)',
  tags,
  permission: 'authenticated',
  request: { ...jsonBody(MintBody) },
  responses: {
    201: jsonContent(dataEnvelope(CapabilityTokenSchema), 'The token (Cache-Control: no-store)'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'record_not_found', 'collection_not_found'),
  },
})

/** POST /api/v1/capability-tokens. There is no GET and no revocation: expiry is the revocation. */
export function capabilityTokensRoutes(tokens: CapabilityTokensService, security: Security) {
  const router = createRouter(security)
  router.openapi(mint, async (c) => {
    const data = await tokens.mint(principalOf(c), c.req.valid('json'))
    return c.json({ data }, 201, { 'Cache-Control': 'no-store' })
  })
  return router
}
