import type { Opened, RecordsDeps } from './context.js'

/**
 * Counts rows a write changed towards the table's planner statistics refresh (issue 33: a quarter of the
 * table written since the last one); never delays the answer, and a failed refresh leaves the old statistics.
 */
export function noteWritten(deps: Pick<RecordsDeps, 'statistics' | 'log'>, opened: Opened, rows: number): void {
  void deps.statistics.wrote(opened.handle, opened.collection.name, rows, (err) =>
    deps.log.warn({ err, collection: opened.collection.name }, 'planner statistics not refreshed after a write'),
  )
}
