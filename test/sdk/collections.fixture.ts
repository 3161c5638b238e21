// A project's collections as `plinth types` writes them: one interface per collection, and `Collections`
// mapping each collection's name to it. The SDK tests and the type-level check use it as a real project would.

export interface Ticket {
  id: string
  created_at: number
  updated_at: number
  created_by: string | null
  updated_by: string | null
  deleted_at: number | null
  _version: number
  title: string
  priority: number | null
  status: 'open' | 'closed' | null
  done: boolean | null
  due: string | null
  tags: string[] | null
  meta: Record<string, unknown> | null
}

export interface Collections {
  tickets: Ticket
}

/** The definition that gives `tickets` these fields (POST /api/v1/collections). */
export const ticketsDefinition = {
  name: 'tickets',
  fields: [
    { name: 'title', type: 'text', required: true },
    { name: 'priority', type: 'integer', required: false },
    { name: 'status', type: 'enum', required: false, enumValues: ['open', 'closed'] },
    { name: 'done', type: 'boolean', required: false },
    { name: 'due', type: 'date', required: false },
    { name: 'tags', type: 'multi_enum', required: false, enumValues: ['bug', 'ui', 'docs'] },
    { name: 'meta', type: 'json', required: false },
  ],
}
