import { z } from 'zod'
import { text } from '../schema-helpers.js'
import { defineOperation } from '../types.js'

/** Writes one line to the step's log (kept or dropped by the flow's log_level). */
export const log = defineOperation({
  type: 'log',
  category: 'transform',
  label: 'Log',
  description: "Writes a message to the run's step log.",
  effects: 'none',
  configSchema: z.strictObject({
    message: text(10_000).describe('The message (a template; objects are written as JSON)'),
    level: z.enum(['info', 'warn', 'error', 'debug']).default('info').describe('The log level'),
  }),
  async run({ message, level }, ctx) {
    ctx.log({ level, message })
    return { message, level }
  },
})
