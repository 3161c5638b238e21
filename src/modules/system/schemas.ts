import { z } from '../../lib/http/index.js'

export const HealthSchema = z
  .object({
    status: z.literal('ok'),
    version: z.string().openapi({ example: '0.1.0' }),
    database: z.enum(['sqlite', 'postgres']),
    storage: z.enum(['local', 's3']),
    cache: z.enum(['memory', 'redis']),
    email_capabilities: z.object({
      arbitraryRecipients: z
        .boolean()
        .openapi({ description: 'Mail can go to any address (a channel is configured).' }),
      channel: z.enum(['email_binding', 'rest_api', 'email_no_channel']),
      deliveryReceipts: z.boolean().openapi({
        description: 'Signed delivery receipts are accepted, so sent can become delivered in the message log.',
      }),
    }),
  })
  .openapi('Health')

export type Health = z.infer<typeof HealthSchema>
