import type { DbKind } from '../../lib/db/index.js'

/** PostgreSQL's EXPLAIN (FORMAT JSON) node, the parts the advisor reads. */
interface PgPlanNode {
  'Node Type'?: string
  'Index Name'?: string
  'Relation Name'?: string
  'Scan Direction'?: string
  Filter?: string
  Plans?: PgPlanNode[]
}

function pgRoot(rows: readonly unknown[]): PgPlanNode | null {
  const first = rows[0] as Record<string, unknown> | undefined
  const plan = first?.['QUERY PLAN']
  const document = typeof plan === 'string' ? (JSON.parse(plan) as unknown) : plan
  const root = Array.isArray(document) ? (document[0] as { Plan?: PgPlanNode } | undefined)?.Plan : undefined
  return root ?? null
}

function pgNodes(node: PgPlanNode | null): PgPlanNode[] {
  if (!node) return []
  return [node, ...(node.Plans ?? []).flatMap(pgNodes)]
}

/**
 * A plan as one line, without any value: SQLite's EXPLAIN QUERY PLAN details (they show `?` for values);
 * PostgreSQL's node types, index names and directions, and whether a node filters (its Filter text holds
 * the query's values, so it is never kept).
 */
export function explainSummary(kind: DbKind, rows: readonly unknown[]): string {
  if (kind === 'sqlite') return rows.map((r) => String((r as { detail?: unknown }).detail ?? '')).join('; ')
  return pgNodes(pgRoot(rows))
    .map((n) => {
      const direction = n['Scan Direction'] === 'Backward' ? ' Backward' : ''
      const index = n['Index Name'] ? ` using ${n['Index Name']}` : ''
      const relation = n['Relation Name'] ? ` on ${n['Relation Name']}` : ''
      return `${n['Node Type'] ?? '?'}${direction}${index}${relation}${n.Filter ? ' (filter)' : ''}`
    })
    .join(' → ')
}

/** True when the plan sorts what it found, or scans the whole table: a compound index would serve it. */
export function isSlowPlan(kind: DbKind, rows: readonly unknown[]): boolean {
  if (kind === 'sqlite') {
    return rows.some((r) => {
      const detail = String((r as { detail?: unknown }).detail ?? '')
      return detail.includes('USE TEMP B-TREE FOR ORDER BY') || /^SCAN [^ ]+$/.test(detail)
    })
  }
  return pgNodes(pgRoot(rows)).some((n) => n['Node Type'] === 'Sort' || n['Node Type'] === 'Seq Scan')
}
