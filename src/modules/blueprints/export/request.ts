import { AppError } from '../../../lib/errors.js'
import { queryFlag, z } from '../../../lib/http/index.js'
import { blueprintId } from '../document/envelope.js'
import { identifierValue } from '../document/params.js'
import { parseSemver } from '../document/semver.js'

/**
 * What `GET /api/v1/blueprints/export` takes (docs/blueprints.md "Export", decision 071): per kind, a
 * comma-separated list of the resources to export (names, or ids; `*` for every one whose name holds the
 * namespace), the derived bricks wanted, and the envelope.
 */

/** The query parameters naming resources, and the brick kind each lists. */
export const listedKinds = {
  collections: 'collection',
  roles: 'role',
  containers: 'container',
  searchIndexes: 'search-index',
  scripts: 'script',
  lenses: 'lens',
  renderers: 'renderer',
  views: 'view',
  webhooks: 'webhook',
  flows: 'flow',
} as const

export type ListParam = keyof typeof listedKinds

const maxNames = 500
const list = z
  .string()
  .max(50_000)
  .optional()
  .openapi({ description: 'Comma-separated names (or ids); * for every one whose name holds the namespace' })

export const ExportQuerySchema = z
  .strictObject({
    namespace: z.string().max(100).openapi({
      description:
        'The prefix every created name embeds (desk in desk_tickets): written as ${params.prefix}, the default of the namespace parameter prefix',
    }),
    id: z.string().max(100).optional().openapi({ description: 'The blueprint id (default: <namespace>-app)' }),
    name: z.string().max(300).optional().openapi({ description: 'The blueprint name (default: the namespace)' }),
    version: z.string().max(300).optional().openapi({ description: 'A semantic version (default 1.0.0)' }),
    collections: list,
    roles: list,
    containers: list,
    searchIndexes: list,
    scripts: list,
    lenses: list,
    renderers: list,
    views: list,
    webhooks: list,
    flows: list,
    records: z.string().max(50_000).optional().openapi({
      description: 'Collections whose records to seed (at most 200 each), as name or name:keyColumn',
    }),
    access: queryFlag.optional().openapi({ description: 'An access brick per exported collection (default true)' }),
    grants: queryFlag.optional().openapi({ description: 'A grants brick per exported role (default true)' }),
    attachments: queryFlag.optional().openapi({
      description: 'The lens attachments of the exported lenses (default true)',
    }),
    nav: queryFlag.optional().openapi({
      description: 'Top-level navigation items opening an exported resource (default false)',
    }),
    format: z.enum(['json', 'md']).optional().openapi({
      description: 'json (default): { data: { source, … } }; md: the document itself, text/markdown',
    }),
  })
  .openapi('BlueprintExportQuery')

export type ExportQuery = z.output<typeof ExportQuerySchema>

/** One collection to seed: its name and, when given, its natural-key column. */
export interface SeedRequest {
  collection: string
  key: string | null
}

/** An export request, checked. */
export interface ExportRequest {
  namespace: string
  id: string
  name: string
  version: string
  /** Per listed kind, the names (or ids) asked for; `*` for the namespace's. */
  select: Partial<Record<ListParam, string[]>>
  records: SeedRequest[]
  access: boolean
  grants: boolean
  attachments: boolean
  nav: boolean
}

/** The request a query makes. Throws invalid_request naming the parameter. */
export function exportRequest(query: ExportQuery): ExportRequest {
  const invalid = (param: string, message: string) => new AppError('invalid_request', message, { param })
  const namespace = query.namespace
  if (!identifierValue.test(namespace))
    throw invalid(
      'namespace',
      'namespace: a lowercase letter followed by up to eleven lowercase letters, digits or underscores',
    )
  const id = query.id ?? `${namespace.replace(/_/g, '-')}-app`
  if (!blueprintId.test(id)) throw invalid('id', 'id: a lowercase letter, then 2 to 40 lowercase letters, digits or -')
  const name = (query.name ?? namespace).trim()
  if (name.length < 1 || name.length > 200) throw invalid('name', 'name: text of 1 to 200 characters')
  const version = query.version ?? '1.0.0'
  if (parseSemver(version) === null) throw invalid('version', 'version: a semantic version such as 1.0.0')

  const select: Partial<Record<ListParam, string[]>> = {}
  for (const param of Object.keys(listedKinds) as ListParam[]) {
    const names = namesOf(query[param], param)
    if (names.length > 0) select[param] = names
  }
  const records = namesOf(query.records, 'records').map((entry): SeedRequest => {
    const at = entry.lastIndexOf(':')
    if (at < 0) return { collection: entry, key: null }
    const collection = entry.slice(0, at)
    const key = entry.slice(at + 1)
    if (collection === '' || key === '')
      throw invalid('records', `records: ${entry} is not collection or collection:key`)
    return { collection, key }
  })
  if (Object.keys(select).length === 0 && records.length === 0)
    throw invalid(
      'collections',
      `Name at least one resource to export (${Object.keys(listedKinds).join(', ')}, records)`,
    )
  return {
    namespace,
    id,
    name,
    version,
    select,
    records,
    access: query.access ?? true,
    grants: query.grants ?? true,
    attachments: query.attachments ?? true,
    nav: query.nav ?? false,
  }
}

function namesOf(text: string | undefined, param: string): string[] {
  if (text === undefined) return []
  const names = [...new Set(text.split(',').map((n) => n.trim()))].filter((n) => n !== '')
  if (names.length > maxNames)
    throw new AppError('invalid_request', `${param}: at most ${maxNames} names`, { param, limit: maxNames })
  const long = names.find((n) => n.length > 200)
  if (long !== undefined) throw new AppError('invalid_request', `${param}: a name is at most 200 characters`, { param })
  return names
}
