import { valueWeight } from '../../../lib/json-bounds.js'
import { StepError } from '../../operations/index.js'

/**
 * The most a run keeps of what its steps took in and gave out (their resolved configs and outputs, kept in
 * `$steps` and the step log until the run ends), as an estimate of the heap it takes (lib/json-bounds
 * valueWeight). A step whose input and output would pass it fails `run_data_limit`: a loop of large
 * responses cannot grow one run until the process runs out of memory.
 */
export const maxRunDataBytes = 256 * 1024 * 1024

/**
 * Counts a step's input and output against the run's data budget (`kept` so far of `budget`): the new
 * total, or run_data_limit (413, not retryable) when they would pass it.
 */
export function chargeRunData(budget: number, kept: number, input: unknown, output: unknown): number {
  const room = budget - kept
  const weight = valueWeight(input, room) + valueWeight(output, room)
  if (weight > room) {
    throw new StepError(
      'run_data_limit',
      `The run's steps would hold more than ${Math.round(budget / 1024 / 1024)} MB of data; a step should read less (a filter, a limit, fields)`,
      { limitBytes: budget },
      413,
      false,
    )
  }
  return kept + weight
}
