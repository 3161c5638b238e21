import { z } from 'zod'

/**
 * Every project setting, its schema and default. Non-secret by construction: secrets live in the
 * environment or in encrypted columns, never here. GET returns flat dotted keys (addendum §7).
 */
export const settingDefinitions = {
  'auth.usernameEnabled': {
    schema: z.boolean(),
    default: false,
    doc: 'Username sign-in (POST /api/auth/sign-in/username) is available',
  },
  'auth.requireEmail': { schema: z.boolean(), default: true, doc: 'New accounts need an email address' },
  'ai.mcp_rate_limit': {
    schema: z.number().int().min(1).max(100_000),
    default: 100,
    doc: 'Tool-server requests per minute per API key',
  },
  'ai.agent_rules': {
    schema: z.string().max(20_000),
    default: [
      '# Agent rules',
      '',
      '- You reach this project through its tool server with an API key: everything is read-only, and you see only the collections, records, fields and flows the key may read.',
      '- Look before you query: read service://collections or call introspect_schema for field names; use search_docs and get_doc_page for how the platform works.',
      '- Prefer aggregate_records for counts and list_collection_records (cursor paging) for whole collections; keep limits small.',
      '- Never ask for or repeat secrets; message bodies are never available through query_message_log.',
      '- Say so when a tool refuses (forbidden, not found) instead of guessing what is there.',
    ].join('\n'),
    doc: 'Agent rules served as markdown at the tool server resource service://docs/agent-rules',
  },
  'files.strategy': {
    schema: z.enum(['store_on_upload', 'store_on_request', 'edge_cache_only']),
    default: 'store_on_upload',
    doc: 'When image variants are generated',
  },
  'files.quotaBytes': {
    schema: z.number().int().min(0),
    default: 5 * 1024 ** 3,
    doc: 'Project storage quota in bytes',
  },
  'files.variants': {
    // A string, as settings are flat scalars: `name:pixels` pairs, comma-separated ("" for none).
    schema: z
      .string()
      .max(400)
      .regex(
        /^(?:[a-z][a-z0-9_-]{0,31}:\d{2,4}(?:,[a-z][a-z0-9_-]{0,31}:\d{2,4}){0,7})?$/,
        'must be name:pixels pairs, comma-separated (at most 8)',
      )
      .refine(
        (value) =>
          value === '' ||
          value.split(',').every((pair) => Number(pair.split(':')[1]) >= 16 && Number(pair.split(':')[1]) <= 4096),
        'sizes are 16 to 4096 pixels',
      )
      .refine(
        (value) => !value.split(',').some((pair) => ['thumbnail', 'original'].includes(pair.split(':')[0]!)),
        '"thumbnail" and "original" are reserved names',
      )
      .refine(
        (value) => new Set(value.split(',').map((pair) => pair.split(':')[0])).size === value.split(',').length,
        'each name once',
      ),
    default: 'small:480,medium:1024',
    doc: 'Image sizes made beside the 200 px thumbnail: name:pixels pairs (longest side), comma-separated',
  },
  'automate.archival_days': {
    schema: z.number().int().min(1).max(3650),
    default: 30,
    doc: 'The system_archival flow purges records soft-deleted longer ago than this many days',
  },
  'i18n.defaultLocale': {
    schema: z.string().regex(/^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8}){0,4}$/, 'must be a BCP-47 locale'),
    default: 'en',
    doc: 'The locale translatable fields are read and written in when a request names none',
  },
} as const

export type SettingKey = keyof typeof settingDefinitions
export type Settings = { [K in SettingKey]: z.infer<(typeof settingDefinitions)[K]['schema']> }

export const settingKeys = Object.keys(settingDefinitions) as SettingKey[]

export function defaultSettings(): Settings {
  return Object.fromEntries(settingKeys.map((k) => [k, settingDefinitions[k].default])) as Settings
}
