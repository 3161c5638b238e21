import { z } from '../../lib/http/index.js'

export const UserSchema = z
  .object({
    id: z.string(),
    email: z.string().nullable(),
    username: z.string().nullable(),
    name: z.string(),
    role: z.string(),
    projectId: z.string(),
    banned: z.boolean(),
    totpEnabled: z.boolean(),
    createdAt: z.number().int(),
    updatedAt: z.number().int(),
    lastSignInAt: z.number().int().nullable(),
  })
  .openapi('User')

export type User = z.infer<typeof UserSchema>

export const email = z.email().max(254)
export const password = z.string().min(8, 'must be at least 8 characters').max(256)
export const username = z
  .string()
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]{2,31}$/, 'must be 3-32 letters, digits, dots, dashes or underscores')
export const displayName = z.string().trim().max(200)
