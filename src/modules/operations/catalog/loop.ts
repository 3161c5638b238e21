import { z } from 'zod'
import { parseJsonBounded } from '../../../lib/json-bounds.js'
import { numeric, StepListSchema } from '../schema-helpers.js'
import { defineOperation, type OperationContext, type StepNode } from '../types.js'

/** The most items one loop step goes through (a crud_query page holds up to 10,000 rows). */
export const maxLoopItems = 10_000
/** How many passes a parallel loop keeps in flight at once (the batch size's ceiling). */
export const maxParallelPasses = 50

/**
 * The list to go through: a list, the JSON text of one (an in-string template gives text), or nothing
 * (null or empty text: an unresolved template, written to the step log by the engine) for no passes.
 */
const itemsSchema = z.preprocess((value) => {
  if (value === null || value === '') return []
  if (typeof value === 'string' && value.trimStart().startsWith('[')) {
    try {
      return parseJsonBounded(value)
    } catch {
      return value
    }
  }
  return value
}, z.array(z.unknown()).max(maxLoopItems))

/**
 * Runs its `operations` once per item through the engine (`ctx.runSteps`: templates, conditions, onError
 * and step logs as for any step, logged as `<loop>[<index>].<step>`), with `$steps.<loop key>.item` and
 * `.index`. serial: one pass after another; batch: `batchSize` passes at once, each batch after the one
 * before has finished; parallel: up to 50 passes in flight. A stopping failure in a pass fails the loop
 * once the passes already started have ended; no new pass starts after it. Output
 * `{ count, results }`: each pass's step outputs by key, in item order.
 */
export const loop = defineOperation({
  type: 'loop',
  category: 'logic',
  label: 'Loop',
  description:
    'Runs its steps once per item of a list (serial, parallel, or in batches of 1-50), with $steps.<loop key>.item and .index; output { count, results }.',
  effects: 'none',
  nestedSteps: ['operations'],
  // The body's steps resolve their own templates, pass by pass.
  rawPaths: ['operations'],
  configSchema: z.strictObject({
    items: itemsSchema.describe(
      `The list to go through (a template such as {{$steps.query.rows}}; at most ${maxLoopItems} items)`,
    ),
    mode: z
      .enum(['serial', 'parallel', 'batch'])
      .default('serial')
      .describe('serial: one pass at a time; parallel: up to 50 at once; batch: batchSize at once, batch after batch'),
    batchSize: numeric(z.number().int().min(1).max(50))
      .default(10)
      .describe('Passes run together in batch mode (1-50)'),
    operations: StepListSchema.min(1).describe('The steps run for each item'),
  }),
  async run(config, ctx) {
    const items = config.items
    const pass = (index: number) =>
      ctx.runSteps(
        config.operations as readonly StepNode[],
        { [ctx.step.key]: { item: items[index], index } },
        { iteration: index },
      )
    const results: Record<string, unknown>[] = new Array(items.length)
    if (config.mode === 'serial') {
      for (let index = 0; index < items.length; index++) results[index] = await pass(index)
    } else if (config.mode === 'batch') {
      for (let start = 0; start < items.length; start += config.batchSize) {
        const indexes = Array.from({ length: Math.min(config.batchSize, items.length - start) }, (_, i) => start + i)
        await settleAll(indexes, pass, results)
      }
    } else {
      await runPooled(items.length, maxParallelPasses, pass, results, ctx)
    }
    return { count: items.length, results }
  },
})

/** Runs every pass of `indexes` at once and waits for all; the first failure (in item order) is thrown after they have ended. */
async function settleAll(
  indexes: readonly number[],
  pass: (index: number) => Promise<Record<string, unknown>>,
  results: Record<string, unknown>[],
): Promise<void> {
  const settled = await Promise.allSettled(indexes.map(async (index) => (results[index] = await pass(index))))
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')
  if (failed) throw failed.reason
}

/** Up to `limit` passes in flight, starting the next as one ends; after a failure (or an abort) no new pass starts, and the first failure is thrown once the running ones have ended. */
async function runPooled(
  count: number,
  limit: number,
  pass: (index: number) => Promise<Record<string, unknown>>,
  results: Record<string, unknown>[],
  ctx: OperationContext,
): Promise<void> {
  let next = 0
  let failure: { reason: unknown } | null = null
  async function worker(): Promise<void> {
    while (failure === null && !ctx.signal.aborted && next < count) {
      const index = next++
      try {
        results[index] = await pass(index)
      } catch (err) {
        failure ??= { reason: err }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker))
  if (failure !== null) throw (failure as { reason: unknown }).reason
  if (ctx.signal.aborted) throw ctx.signal.reason
}
