import type { ToolDefinition } from '../types.js'
import { aggregateRecords } from './aggregate-records.js'
import { getDocPage } from './get-doc-page.js'
import { getFlowDefinition } from './get-flow-definition.js'
import { introspectSchema } from './introspect-schema.js'
import { listCollectionRecords } from './list-collection-records.js'
import { listFlows } from './list-flows.js'
import { queryMessageLog } from './query-message-log.js'
import { searchDocs } from './search-docs.js'
import { searchRecords } from './search-records.js'

/** The tool server's tools (core-api § Tool server, addendum §7), in the spec's order. */
export const tools: readonly ToolDefinition[] = Object.freeze([
  searchRecords,
  listCollectionRecords,
  aggregateRecords,
  introspectSchema,
  listFlows,
  getFlowDefinition,
  searchDocs,
  getDocPage,
  queryMessageLog,
] as unknown as ToolDefinition[])

const byName = new Map(tools.map((t) => [t.name, t]))

/** The tool of that name, or undefined. */
export function toolNamed(name: string): ToolDefinition | undefined {
  return byName.get(name)
}
