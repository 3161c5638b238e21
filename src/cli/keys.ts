import { flagOption, listOption, parseCommand, stringOption, UsageError } from './args.js'
import { adminHelp } from './admin-help.js'
import { runGroup } from './client-command.js'
import { clientFor, printJson, showHelp, type Context } from './context.js'
import { formatTable } from './users.js'

/** A key as the API lists it (never the secret). */
interface WireKey {
  id: string
  label: string
  capabilities: string[]
  user_id?: string | null
  created_at: number
  expires_at: number | null
  last_used_at?: number | null
}

const units: Record<string, number> = { m: 60, h: 3600, d: 86_400, w: 604_800 }

/**
 * `--expires` as Unix seconds: a duration from now (`90m`, `12h`, `30d`, `8w`), a date or date-time
 * (`2027-01-31`, `2027-01-31T12:00:00Z`, read as UTC when no zone is given), or Unix seconds. Throws UsageError.
 */
export function parseExpiry(value: string, nowSeconds: number): number {
  const text = value.trim()
  const duration = /^(\d+)([mhdw])$/.exec(text)
  if (duration) return nowSeconds + Number(duration[1]) * units[duration[2]!]!
  if (/^\d{9,}$/.test(text)) return Number(text)
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)) {
    const zoned = /(Z|[+-]\d{2}:?\d{2})$/.test(text) || text.length === 10 ? text : `${text}Z`
    const ms = Date.parse(zoned)
    if (!Number.isNaN(ms)) return Math.floor(ms / 1000)
  }
  throw new UsageError(`--expires takes a duration (30d, 12h), a date (2027-01-31) or Unix seconds, not "${value}"`)
}

function when(seconds: number | null | undefined): string {
  return seconds == null ? 'never' : new Date(seconds * 1000).toISOString().replace('.000Z', 'Z')
}

/**
 * `plinth keys create --name N --scopes a,b [--expires …] [--service]`: the secret on stdout, once, alone on
 * its line (so `KEY=$(plinth keys create …)` holds just it); what describes the key on stderr.
 */
async function createCommand(argv: string[], ctx: Context): Promise<number> {
  const parsed = parseCommand(
    argv,
    {
      name: { type: 'string' },
      scopes: { type: 'string', multiple: true },
      expires: { type: 'string' },
      service: { type: 'boolean' },
    },
    0,
  )
  if (parsed.values.help) return showHelp(ctx, adminHelp.keysCreate)
  const label = stringOption(parsed, 'name')?.trim()
  if (!label) throw new UsageError("--name is required (the key's label)")
  const capabilities = listOption(parsed, 'scopes')
  if (!capabilities || capabilities.length === 0) {
    throw new UsageError('--scopes is required: the permissions the key holds (e.g. collections/tickets:read)')
  }
  const expires = stringOption(parsed, 'expires')
  const body = {
    label,
    capabilities,
    ...(expires !== undefined ? { expires_at: parseExpiry(expires, Math.floor(Date.now() / 1000)) } : {}),
    ...(flagOption(parsed, 'service') ? { service: true } : {}),
  }
  const created = (await clientFor(ctx, parsed).request('POST', '/api/auth/api-keys', body)) as WireKey & {
    raw: string
  }
  if (ctx.json) {
    printJson(ctx, created)
    return 0
  }
  ctx.io.stdout.write(`${created.raw}\n`)
  ctx.io.stderr.write(
    `Created key ${created.id} "${created.label}" (${created.capabilities.join(', ')}; expires ${when(created.expires_at)}).\n` +
      'The secret above is shown only this once: store it now.\n',
  )
  return 0
}

/** `plinth keys list [--json]`: the project's keys for an administrator, the caller's own otherwise. */
async function listCommand(argv: string[], ctx: Context): Promise<number> {
  const parsed = parseCommand(argv, {}, 0)
  if (parsed.values.help) return showHelp(ctx, adminHelp.keysList)
  const keys = (await clientFor(ctx, parsed).request('GET', '/api/auth/api-keys')) as WireKey[]
  if (ctx.json) {
    printJson(ctx, keys)
    return 0
  }
  const rows = keys.map((k) => [
    k.id,
    k.user_id ? 'user' : 'service',
    when(k.expires_at),
    when(k.last_used_at),
    k.label,
  ])
  ctx.io.stdout.write(`${formatTable([['ID', 'KIND', 'EXPIRES', 'LAST USED', 'LABEL'], ...rows])}\n`)
  return 0
}

/** `plinth keys revoke <id>`: the key is refused (401) at once, on every instance. */
async function revokeCommand(argv: string[], ctx: Context): Promise<number> {
  const parsed = parseCommand(argv, {}, 1)
  if (parsed.values.help) return showHelp(ctx, adminHelp.keysRevoke)
  const id = parsed.positionals[0]
  if (!id) throw new UsageError('Missing the key id (plinth keys list shows them)')
  const reply = await clientFor(ctx, parsed).request('DELETE', `/api/auth/api-keys/${encodeURIComponent(id)}`)
  if (ctx.json) printJson(ctx, reply)
  else ctx.io.stdout.write(`Revoked key ${id}\n`)
  return 0
}

/** `plinth keys create|list|revoke …`. */
export const runKeys = runGroup(
  'keys',
  { create: createCommand, list: listCommand, revoke: revokeCommand },
  adminHelp.keys,
)
