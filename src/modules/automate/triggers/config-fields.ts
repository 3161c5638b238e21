import { z } from 'zod'

/** Config fields more than one trigger shares. */

export const recordEventsField = z
  .array(z.enum(['record.create', 'record.update', 'record.delete']))
  .min(1)
  .max(3)
export const httpMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const
