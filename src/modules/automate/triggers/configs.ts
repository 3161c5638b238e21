import { z } from 'zod'
import type { TriggerType } from '../model.js'
import { parseEntry } from './webhook-access.js'

/**
 * Each trigger type's config (automation spec "Trigger types"), checked when a flow is saved. Activation
 * checks more (a schedule's time zone: 422 on activation). The triggers' behaviour lives beside this file,
 * one file per type.
 */
const recordEvents = z.array(z.enum(['record.create', 'record.update', 'record.delete'])).min(1).max(3)
const httpMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

export const triggerConfigSchemas = {
  event_action: z.object({ events: recordEvents }).strict(),
  event_filter: z.object({ events: recordEvents }).strict(),
  webhook: z
    .object({
      allowed_methods: z.array(z.enum(httpMethods)).min(1).default(['POST']),
      require_auth: z.boolean().default(false),
      /** The shared secret (a credential: masked on reads, restored on write). */
      secret: z.string().min(1).max(500).optional(),
      /** Addresses or CIDR ranges allowed to call; empty allows any. */
      ip_allowlist: z
        .array(z.string().min(1).max(64).refine((entry) => parseEntry(entry) !== null, 'must be an IP address or a CIDR range such as 203.0.113.0/24'))
        .max(100)
        .default([]),
    })
    .strict(),
  schedule: z.object({ cron: z.string().min(1).max(200), timezone: z.string().min(1).max(100).default('UTC') }).strict(),
  manual: z
    .object({
      manual_type: z.enum(['collection', 'global']).default('global'),
      collections: z.array(z.string().min(1).max(100)).default([]),
      selection: z.enum(['none', 'single', 'multiple']).default('none'),
      input_fields: z
        .array(z.object({ name: z.string().min(1).max(100), label: z.string().max(200).optional(), type: z.string().min(1).max(50).default('text'), required: z.boolean().default(false) }))
        .max(50)
        .default([]),
      confirm: z.union([z.boolean(), z.object({ message: z.string().max(1000) })]).default(false),
    })
    .strict(),
  api_endpoint: z.object({ method: z.enum(httpMethods).default('POST'), require_auth: z.boolean().default(true) }).strict(),
  another_flow: z.object({}).strict(),
  app_event: z.object({ events: z.array(z.enum(['user.login', 'file.upload'])).min(1).max(2) }).strict(),
} satisfies Record<TriggerType, z.ZodType>

