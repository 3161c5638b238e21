import { z } from 'zod'
import { text } from '../schema-helpers.js'
import { defineOperation, StopRun } from '../types.js'

/** Ends the run here: success completes it, error fails it (and rejects the write in an event_filter flow). */
export const stop = defineOperation({
  type: 'stop',
  category: 'logic',
  label: 'Stop',
  description:
    'Ends the run at this step with status success (completed) or error (failed; in an event_filter flow the triggering write is rejected with the message).',
  effects: 'none',
  configSchema: z.strictObject({
    status: z.enum(['success', 'error']).default('success').describe('success completes the run, error fails it'),
    message: text(2000).default('Flow execution stopped').describe('Why the run stopped (a template)'),
  }),
  async run({ status, message }): Promise<never> {
    throw new StopRun(status, message)
  },
})
