import { z } from 'zod'
import { numeric, text } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'

/** Fails the run with the flow's own message and status (what a blocking trigger answers); never retried. */
export const throwError = defineOperation({
  type: 'throw_error',
  category: 'logic',
  label: 'Throw error',
  description:
    'Fails the run with a message and an HTTP status (100-599, default 400); an event_filter flow rejects the write with them.',
  effects: 'none',
  configSchema: z.strictObject({
    message: text(2000, 1).describe('The error message (a template)'),
    statusCode: numeric(z.number().int().min(100).max(599))
      .default(400)
      .describe('The HTTP status a blocking trigger answers'),
  }),
  async run({ message, statusCode }): Promise<never> {
    throw new StepError('flow_error', message, {}, statusCode, false)
  },
})
