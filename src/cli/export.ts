import { writeFile } from 'node:fs/promises'
import { camelCase, listOption, parseOpenCommand, stringOption, UsageError, type Parsed } from './args.js'
import { ApiError } from './client.js'
import { clientFor, printJson, showHelp, type Context } from './context.js'
import { help } from './help.js'

/**
 * The export's query from the open-ended flags: each `--<kind> a,b` (repeatable) becomes `kind=a,b`, a flag
 * without a value `kind=true`. Nothing here knows the kinds, so a flag the export learns later works as is.
 */
export function exportQuery(parsed: Parsed, flags: string[]): URLSearchParams {
  const query = new URLSearchParams()
  for (const flag of flags) {
    const values = listOption(parsed, flag) ?? []
    const value = values.length > 0 ? values.join(',') : parsed.values[flag] !== undefined ? 'true' : ''
    if (value !== '') query.set(camelCase(flag), value)
  }
  return query
}

/** `plinth blueprint export [--<kind> a,b …] [-o file]`: the document to stdout, or to the file. */
export async function exportCommand(argv: string[], ctx: Context): Promise<number> {
  const { parsed, extra } = parseOpenCommand(argv, { output: { type: 'string', short: 'o' } }, 0)
  if (parsed.values.help) return showHelp(ctx, help.export)
  const output = stringOption(parsed, 'output')
  if (output === '') throw new UsageError('-o takes a file name')
  // The CLI writes the document itself; the API's other format (the bare text) is not for it to read.
  if (extra.includes('format')) throw new UsageError('--format is not taken: the document is written as is')
  const client = clientFor(ctx, parsed)
  const query = exportQuery(parsed, extra).toString()
  const reply = (await client.request('GET', `/api/v1/blueprints/export${query ? `?${query}` : ''}`)) as {
    data: { source?: unknown; secrets?: unknown }
  }
  const source = reply.data?.source
  if (typeof source !== 'string') throw new ApiError(null, 'bad_response', 'the export answered no document')
  if (ctx.json) printJson(ctx, reply)
  if (output) {
    try {
      await writeFile(output, source)
    } catch (err) {
      ctx.io.stderr.write(`error: cannot write ${output} (${(err as NodeJS.ErrnoException).code ?? err})\n`)
      return 1
    }
    ctx.io.stderr.write(`Wrote ${output} (${Buffer.byteLength(source)} bytes)\n`)
  } else if (!ctx.json) {
    ctx.io.stdout.write(source.endsWith('\n') ? source : `${source}\n`)
  }
  // On stderr, so stdout stays the document: what an install of it will have to be given.
  const secrets = Array.isArray(reply.data.secrets) ? (reply.data.secrets as string[]) : []
  if (secrets.length > 0) {
    ctx.io.stderr.write(
      `Secret parameters (values not exported; give them as PLINTH_SECRET_<name> on install): ${secrets.join(', ')}\n`,
    )
  }
  return 0
}
