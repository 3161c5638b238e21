type Schema = {
  $ref?: string
  type?: string | string[]
  enum?: unknown[]
  const?: unknown
  items?: Schema
  properties?: Record<string, Schema>
  required?: string[]
  anyOf?: Schema[]
  oneOf?: Schema[]
  description?: string
}
type Parameter = { name: string; in: string; required?: boolean; schema?: Schema; description?: string }
type Operation = {
  operationId?: string
  summary?: string
  description?: string
  tags?: string[]
  parameters?: Parameter[]
  requestBody?: { content?: Record<string, { schema?: Schema }> }
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>
  'x-permission'?: string
}
type Document = {
  info: { title: string; version: string; description?: string }
  servers?: { url: string }[]
  paths?: Record<string, Record<string, unknown>>
  components?: { schemas?: Record<string, Schema> }
}

const methods = ['get', 'post', 'put', 'patch', 'delete'] as const

/**
 * A compact Markdown summary of the API for AI tools, generated from the OpenAPI document so it can
 * never drift from the routes: each operation with its permission, parameters, body fields and statuses.
 */
export function renderLlmContext(doc: unknown): string {
  const d = doc as Document
  const schemas = d.components?.schemas ?? {}
  const resolve = (s: Schema | undefined): Schema | undefined => (s?.$ref ? schemas[s.$ref.split('/').pop() ?? ''] : s)
  const typeOf = (s: Schema | undefined, depth = 0): string => {
    const r = resolve(s)
    if (!r) return 'any'
    if (r.const !== undefined) return JSON.stringify(r.const)
    if (r.enum) return r.enum.map((v) => JSON.stringify(v)).join(' | ')
    const alternatives = r.anyOf ?? r.oneOf
    if (alternatives) return alternatives.map((a) => typeOf(a, depth)).join(' | ')
    const type = Array.isArray(r.type) ? r.type.join(' | ') : r.type
    if (type === 'array') return `${typeOf(r.items, depth)}[]`
    if (type === 'object' && r.properties && depth < 2) {
      const fields = Object.entries(r.properties).map(
        ([k, v]) => `${k}${r.required?.includes(k) ? '' : '?'}: ${typeOf(v, depth + 1)}`,
      )
      return `{ ${fields.join(', ')} }`
    }
    return type ?? 'any'
  }

  const out: string[] = [
    `# ${d.info.title} ${d.info.version}: context for AI tools`,
    '',
    `Base URL: ${d.servers?.[0]?.url ?? '/'}`,
    '',
    'Conventions: JSON bodies; auth is `Authorization: Bearer <session token | sk- API key>`.',
    'Errors: `{ "error": "<code>", "message": "…", "details": {} }` with the HTTP status of the code.',
    // Said per operation (its `answers` line), because the API is not uniform: most single items come as
    // `{ data }` and most lists as `{ data, total, page, limit, hasMore }`, but not all (the auth routes'),
    // and timestamps are Unix seconds in the core API and ISO 8601 strings in automation and blueprints.
    'Answers differ by area: each operation below shows the shape of its success answer (`answers`); a time is',
    'Unix seconds where its type is a number and ISO 8601 where it is a string.',
    '',
  ]
  const byTag = new Map<string, string[]>()
  for (const [path, item] of Object.entries(d.paths ?? {})) {
    for (const method of methods) {
      const op = item[method] as Operation | undefined
      if (!op) continue
      const lines: string[] = [`### ${method.toUpperCase()} ${path}`, '']
      if (op.summary) lines.push(op.summary, '')
      lines.push(`- operationId: \`${op.operationId ?? ''}\`; permission: \`${op['x-permission'] ?? 'public'}\``)
      for (const p of op.parameters ?? []) {
        lines.push(`- ${p.in} \`${p.name}\`${p.required ? ' (required)' : ''}: ${typeOf(p.schema)}`)
      }
      const body = op.requestBody?.content
      if (body) {
        for (const [type, media] of Object.entries(body)) lines.push(`- body (${type}): ${typeOf(media.schema)}`)
      }
      const success = Object.entries(op.responses ?? {}).find(([status]) => status.startsWith('2'))
      const json = success?.[1].content?.['application/json']
      if (success && json) lines.push(`- answers ${success[0]}: ${typeOf(json.schema)}`)
      const statuses = Object.entries(op.responses ?? {}).map(([s, r]) => `${s} ${r.description ?? ''}`.trim())
      if (statuses.length > 0) lines.push(`- responses: ${statuses.join('; ')}`)
      lines.push('')
      const tag = op.tags?.[0] ?? 'Other'
      byTag.set(tag, [...(byTag.get(tag) ?? []), ...lines])
    }
  }
  for (const [tag, lines] of [...byTag].sort(([a], [b]) => a.localeCompare(b))) out.push(`## ${tag}`, '', ...lines)
  return out.join('\n')
}
