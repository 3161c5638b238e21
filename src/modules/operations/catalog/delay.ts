import { z } from 'zod'
import { numeric } from '../schema-helpers.js'
import { defineOperation } from '../types.js'

/** Waits; the wait counts toward the flow's timeout and ends at once when the run is cancelled. */
export const delay = defineOperation({
  type: 'delay',
  category: 'transform',
  label: 'Delay',
  description: 'Waits a number of milliseconds (0-25000); counts toward the flow timeout.',
  effects: 'none',
  configSchema: z.strictObject({
    ms: numeric(z.number().int().min(0).max(25_000)).default(1000).describe('Milliseconds to wait'),
  }),
  async run({ ms }, ctx) {
    await ctx.clock.sleep(ms, ctx.signal) // aborts with the flow's timeout or a cancel; a fake clock in tests
    return { waitedMs: ms }
  },
})
