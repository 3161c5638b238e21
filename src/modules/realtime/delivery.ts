import type { ResolvedFilterNode } from '../../lib/filter/index.js'
import { presentRecord, recordVisible, type ApiRecord, type Opened } from '../records/index.js'
import type { PublishedEvent, RecordEventType } from './hub.js'

/** One event as a subscriber receives it (addendum §5). */
export interface StreamMessage {
  readonly type: RecordEventType
  readonly collection: string
  readonly record: ApiRecord
  readonly at: number
}

/** What a stream asked for beyond the caller's own scope. */
export interface StreamView {
  /** The request's `filter`, variables resolved. */
  readonly filter: ResolvedFilterNode | null
  /** The request's `ids` (or a capability token's one record); null for every record. */
  readonly ids: ReadonlySet<string> | null
}

/**
 * What one subscriber receives for one event, decided with its scope as it is now, or null. A record is in
 * the subscriber's view when it is not soft-deleted, inside its row scope, and matches the stream's filter
 * and ids. An update is judged on both sides, so a stream follows a live query:
 * - in view after → `record.update` (also when it just entered the view, e.g. restored or moved in);
 * - in view before but not after → `record.delete` with the record as it was: to this subscriber the record
 *   is gone, and whether it was deleted or moved out of reach is not told (hidden means missing);
 * - in view on neither side → nothing.
 * The record is shaped through the subscriber's column allowlist, as a read would show it.
 */
export function messageFor(event: PublishedEvent, opened: Opened, view: StreamView): StreamMessage | null {
  const inView = (record: ApiRecord | null): record is ApiRecord =>
    record !== null &&
    (view.ids === null || view.ids.has(String(record.id))) &&
    recordVisible(opened, record, view.filter)
  const message = (type: RecordEventType, record: ApiRecord): StreamMessage => ({
    type,
    collection: event.collection,
    record: presentRecord(opened, record),
    at: event.at,
  })

  switch (event.type) {
    case 'record.create':
      return inView(event.after) ? message('record.create', event.after) : null
    case 'record.update':
      if (inView(event.after)) return message('record.update', event.after)
      return inView(event.before) ? message('record.delete', event.before) : null
    case 'record.delete':
      return inView(event.before) ? message('record.delete', event.before) : null
  }
}

/** The top-level fields a filter compares (to re-check them against a narrowed column allowlist). */
export function fieldsOf(node: ResolvedFilterNode | null, into: Set<string> = new Set()): Set<string> {
  if (!node) return into
  if (node.kind === 'compare') into.add(String(node.field[0]))
  else for (const item of node.items) fieldsOf(item, into)
  return into
}
