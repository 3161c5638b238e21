import { z } from '../../lib/http/index.js'

/** The wire shapes of /api/v1/webhooks (core-api § Events: collection webhooks); they feed validation and the OpenAPI document. */

export const recordEvents = ['record.create', 'record.update', 'record.delete'] as const
export type RecordEventName = (typeof recordEvents)[number]

/** Eight U+2022 bullets: what a stored secret or header value reads as (the flows' mask). */
export const MASK = '\u2022'.repeat(8)

export const deliveryStatuses = ['pending', 'retrying', 'success', 'failed'] as const

export const WebhookSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    collection: z.string(),
    events: z.array(z.enum(recordEvents)),
    url: z.string(),
    secret: z.string().nullable().openapi({
      description: 'The mask (eight bullets) when a secret is set, else null: the secret itself is never returned',
    }),
    hasSecret: z.boolean(),
    headers: z
      .record(z.string(), z.string())
      .openapi({ description: 'Extra request headers, names only: every value reads as the mask' }),
    active: z.boolean(),
    createdAt: z.number().int().openapi({ description: 'Unix seconds' }),
    updatedAt: z.number().int().openapi({ description: 'Unix seconds' }),
  })
  .openapi('Webhook', {
    description: 'A collection webhook: record events of one collection, POSTed as signed JSON to a URL',
  })

export const AttemptSchema = z.object({
  attempt: z.number().int(),
  at: z.number().int().openapi({ description: 'Milliseconds since the epoch' }),
  status: z
    .number()
    .int()
    .nullable()
    .openapi({ description: 'HTTP status the receiver answered, or null when it did not answer' }),
  durationMs: z.number().int(),
  error: z
    .string()
    .nullable()
    .openapi({ description: 'Why the attempt failed: http_<status>, timed_out, blocked_address, network_error…' }),
})

export const DeliverySchema = z
  .object({
    id: z.string(),
    webhookId: z.string(),
    event: z.enum(recordEvents),
    collection: z.string(),
    recordId: z.string().nullable(),
    status: z.enum(deliveryStatuses),
    attempts: z.number().int(),
    responseStatus: z.number().int().nullable(),
    durationMs: z.number().int().nullable(),
    error: z.string().nullable(),
    attemptLog: z.array(AttemptSchema),
    createdAt: z.number().int(),
    updatedAt: z.number().int(),
  })
  .openapi('WebhookDelivery', {
    description:
      'One event delivered to a webhook: its outcome, each attempt with status and duration (never the payload or the secret)',
  })

const name = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters')
const collection = z.string().min(1).max(50)
const events = z
  .array(z.enum(recordEvents))
  .min(1, 'needs at least one event')
  .max(3)
  .refine((list) => new Set(list).size === list.length, 'lists an event twice')
const url = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .refine(isWebhookUrl, 'must be an http:// or https:// URL without a user name or password')
  .openapi({ example: 'https://hooks.example.com/plinth' })
const secret = z.string().min(1, 'must not be empty (null removes it)').max(1000).openapi({
  description: 'Write-only: sealed at rest, shown as the mask; the mask itself keeps the stored one',
  format: 'password',
})
const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}$/, 'must be an HTTP header name')
const headerValue = z
  .string()
  .max(8192)
  .regex(/^[^\r\n\0]*$/, 'must not hold a line break')
const headers = z
  .record(headerName, headerValue)
  .refine((value) => Object.keys(value).length <= 50, 'at most 50 headers')
  .openapi({
    description:
      'Extra request headers; sealed at rest, values read as the mask; a mask sent keeps the stored value of that name',
  })

export const CreateWebhookSchema = z.strictObject({
  name: name.optional(),
  collection,
  events,
  url,
  secret: secret.nullable().optional(),
  headers: headers.default({}),
  active: z.boolean().default(true),
})

export const UpdateWebhookSchema = z.strictObject({
  name: name.optional(),
  collection: collection.optional(),
  events: events.optional(),
  url: url.optional(),
  secret: secret.nullable().optional(),
  headers: headers.optional(),
  active: z.boolean().optional(),
})

export type Webhook = z.infer<typeof WebhookSchema>
export type Delivery = z.infer<typeof DeliverySchema>
export type CreateWebhookInput = z.infer<typeof CreateWebhookSchema>
export type UpdateWebhookInput = z.infer<typeof UpdateWebhookSchema>

/** An absolute http(s) URL with a host and no credentials (they would travel in the clear and in logs). */
export function isWebhookUrl(value: string): boolean {
  if (!URL.canParse(value)) return false
  const parsed = new URL(value)
  return (
    (parsed.protocol === 'http:' || parsed.protocol === 'https:') &&
    parsed.hostname !== '' &&
    parsed.username === '' &&
    parsed.password === ''
  )
}
