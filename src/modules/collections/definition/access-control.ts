import { z } from 'zod'

/**
 * A collection's `accessControl` (addendum §4), or null. `private`: owners, people it is shared with and
 * admin roles see a record; `team`: role grants alone decide; `public`: anonymous callers may read.
 */
export const AccessControlSchema = z
  .strictObject({
    preset: z.enum(['private', 'team', 'public']),
    sharing: z.boolean().optional(),
  })
  .nullable()

export type AccessControl = z.infer<typeof AccessControlSchema>
