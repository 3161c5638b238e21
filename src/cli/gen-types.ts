import { writeFile } from 'node:fs/promises'
import { listOption, parseCommand, stringOption, UsageError } from './args.js'
import { ApiError } from './client.js'
import { runClientCommand } from './client-command.js'
import { clientFor, showHelp, type CliIo, type Context } from './context.js'
import type { WireCollection } from './gen-types-fields.js'
import { renderTypes, unknownNames } from './gen-types-render.js'
import { adminHelp } from './admin-help.js'

/**
 * `plinth types [--collections a,b] [--out file]`: TypeScript types of the project's collections, from the
 * live schema (`GET /api/v1/collections`, the collections the caller may read), to stdout or a file.
 */
async function typesCommand(argv: string[], ctx: Context): Promise<number> {
  const parsed = parseCommand(
    argv,
    { collections: { type: 'string', multiple: true }, out: { type: 'string', short: 'o' } },
    0,
  )
  if (parsed.values.help) return showHelp(ctx, adminHelp.types)
  const out = stringOption(parsed, 'out')
  if (out === '') throw new UsageError('--out takes a file name')
  const wanted = listOption(parsed, 'collections')
  const client = clientFor(ctx, parsed)
  const reply = (await client.request('GET', '/api/v1/collections')) as { data?: unknown }
  if (!Array.isArray(reply.data)) throw new ApiError(null, 'bad_response', 'the collections API answered no list')
  const all = reply.data as WireCollection[]
  if (wanted) {
    const missing = unknownNames(wanted, all)
    if (missing.length > 0) {
      ctx.io.stderr.write(`error: no such collection (or not readable with this credential): ${missing.join(', ')}\n`)
      return 1
    }
  }
  const selected = wanted ? all.filter((c) => wanted.includes(c.name)) : all
  const source = renderTypes(selected, all, { source: client.baseUrl })
  if (!out) {
    ctx.io.stdout.write(source)
    return 0
  }
  try {
    await writeFile(out, source)
  } catch (err) {
    ctx.io.stderr.write(`error: cannot write ${out} (${(err as NodeJS.ErrnoException).code ?? err})\n`)
    return 1
  }
  ctx.io.stderr.write(`Wrote ${out}: ${selected.length} collection${selected.length === 1 ? '' : 's'}\n`)
  return 0
}

/** `plinth types …`; returns the exit code (0 ok, 1 an API error or an unknown collection, 2 usage). */
export function runTypes(argv: string[], io: CliIo): Promise<number> {
  return runClientCommand('types', argv, io, typesCommand)
}
