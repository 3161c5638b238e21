import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { tools, toolNamed } from './index.js'

// The spec's nine tools (core-api § Tool server) with the arguments of addendum §7.
const spec: Record<string, { required: string[]; optional: string[] }> = {
  search_records: { required: ['collection'], optional: ['filter', 'search', 'limit'] },
  list_collection_records: { required: ['collection'], optional: ['cursor', 'limit'] },
  aggregate_records: { required: ['collection'], optional: ['filter', 'groupBy'] },
  introspect_schema: { required: ['collection'], optional: [] },
  list_flows: { required: [], optional: [] },
  get_flow_definition: { required: ['flowId'], optional: [] },
  search_docs: { required: ['query'], optional: [] },
  get_doc_page: { required: ['slug'], optional: [] },
  query_message_log: { required: [], optional: ['status', 'to', 'since', 'limit'] },
}

describe('the tool registry', () => {
  it('holds exactly the spec tools, in its order', () => {
    expect(tools.map((t) => t.name)).toEqual(Object.keys(spec))
  })

  for (const [name, args] of Object.entries(spec)) {
    it(`${name} takes exactly the arguments of addendum §7`, () => {
      const schema = z.toJSONSchema(toolNamed(name)!.inputSchema, { io: 'input' }) as {
        properties?: Record<string, unknown>
        required?: string[]
        additionalProperties?: unknown
      }
      expect(Object.keys(schema.properties ?? {}).sort()).toEqual([...args.required, ...args.optional].sort())
      expect((schema.required ?? []).sort()).toEqual([...args.required].sort())
      expect(schema.additionalProperties).toBe(false)
      expect(toolNamed(name)!.description.length).toBeGreaterThan(20)
    })
  }

  it('an unknown name is no tool', () => {
    expect(toolNamed('delete_records')).toBeUndefined()
    expect(toolNamed('__proto__')).toBeUndefined()
  })
})
