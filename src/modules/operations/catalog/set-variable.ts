import { z } from 'zod'
import { requiredValue } from '../schema-helpers.js'
import { defineOperation } from '../types.js'

/** Holds a value for later steps: its output is the value itself, read as `$steps.<step key>` (decision 027). */
export const setVariable = defineOperation({
  type: 'set_variable',
  category: 'logic',
  label: 'Set variable',
  description:
    "Stores a value (any JSON, templates resolved) as this step's output, read by later steps as $steps.<step key>.",
  effects: 'none',
  configSchema: z.strictObject({
    key: z
      .string()
      .min(1)
      .max(100)
      .describe('A name for the value (documentation; later steps read it by the step key)'),
    value: requiredValue().describe('The value: any JSON, or a template such as {{$trigger.body.total}}'),
  }),
  async run(config) {
    return config.value
  },
})
