import { flagOption, parseCommand, UsageError } from './args.js'
import { ApiError, type Client } from './client.js'
import { adminHelp } from './admin-help.js'
import { runGroup } from './client-command.js'
import { clientFor, printJson, showHelp, type Context } from './context.js'

/** A user as GET /api/v1/users answers it (what the CLI prints). */
interface WireUser {
  id: string
  email: string | null
  username: string | null
  name: string
  role: string
  banned: boolean
}

const pageSize = 100

/** Every user of the project the credential acts in, page by page (the API pages by 100 at most). */
async function allUsers(client: Client): Promise<{ data: WireUser[]; total: number }> {
  const data: WireUser[] = []
  for (let page = 1; ; page++) {
    const reply = (await client.request('GET', `/api/v1/users?page=${page}&limit=${pageSize}`)) as {
      data: WireUser[]
      total: number
      hasMore: boolean
    }
    data.push(...reply.data)
    if (!reply.hasMore || reply.data.length === 0) return { data, total: reply.total }
  }
}

/** Columns padded to their widest cell; the last one left ragged. */
export function formatTable(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => row[i]!.length))) ?? []
  return rows
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '))
    .join('\n')
}

/** `plinth users list [--json]`: every user of the project, in the API's order. */
async function listCommand(argv: string[], ctx: Context): Promise<number> {
  const parsed = parseCommand(argv, {}, 0)
  if (parsed.values.help) return showHelp(ctx, adminHelp.usersList)
  const users = await allUsers(clientFor(ctx, parsed))
  if (ctx.json) {
    printJson(ctx, users)
    return 0
  }
  const rows = users.data.map((u) => [
    u.id,
    u.email ?? u.username ?? '-',
    u.role,
    u.banned ? 'banned' : 'active',
    u.name,
  ])
  ctx.io.stdout.write(`${formatTable([['ID', 'EMAIL', 'ROLE', 'STATUS', 'NAME'], ...rows])}\n`)
  ctx.io.stderr.write(`${users.total} user${users.total === 1 ? '' : 's'}\n`)
  return 0
}

/**
 * The id of the user `who` names: an id as given, or the one account with that email (the list is searched,
 * so the caller needs system/users:read either way). An email held by several accounts is refused.
 */
async function resolveUser(client: Client, who: string): Promise<string> {
  if (!who.includes('@')) return who
  const email = who.trim().toLowerCase()
  const matches = (await allUsers(client)).data.filter((u) => u.email?.toLowerCase() === email)
  if (matches.length === 0) throw new ApiError(null, 'not_found', `No user has the email ${who}`)
  if (matches.length > 1) {
    throw new ApiError(
      null,
      'ambiguous',
      `${matches.length} accounts share ${who}: give the id (${matches.map((u) => u.id).join(', ')})`,
    )
  }
  return matches[0]!.id
}

/** `plinth users ban <id|email> [--unban]`: PATCH the user's `banned`; their sessions and keys stop at once. */
async function banCommand(argv: string[], ctx: Context): Promise<number> {
  const parsed = parseCommand(argv, { unban: { type: 'boolean' } }, 1)
  if (parsed.values.help) return showHelp(ctx, adminHelp.usersBan)
  const who = parsed.positionals[0]
  if (!who) throw new UsageError('Missing the user: an id or an email')
  const client = clientFor(ctx, parsed)
  const id = await resolveUser(client, who)
  const banned = !flagOption(parsed, 'unban')
  const reply = (await client.request('PATCH', `/api/v1/users/${encodeURIComponent(id)}`, { banned })) as {
    data: WireUser
  }
  if (ctx.json) printJson(ctx, reply)
  else
    ctx.io.stdout.write(
      `${banned ? 'Banned' : 'Unbanned'} ${reply.data.email ?? reply.data.username ?? ''} (${reply.data.id})\n`,
    )
  return 0
}

/** `plinth users list|ban …`. */
export const runUsers = runGroup('users', { list: listCommand, ban: banCommand }, adminHelp.users)
