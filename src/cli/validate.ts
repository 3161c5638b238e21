import { parseCommand } from './args.js'
import { clientFor, printJson, showHelp, type Context } from './context.js'
import { help } from './help.js'
import { readDocument } from './input.js'
import { formatValidation } from './print.js'
import type { ValidateResult } from './types.js'

/** `plinth blueprint validate <file>`: 0 when the document is sound, 1 when a diagnostic is an error. */
export async function validateCommand(argv: string[], ctx: Context): Promise<number> {
  const parsed = parseCommand(argv, {}, 1)
  if (parsed.values.help) return showHelp(ctx, help.validate)
  const client = clientFor(ctx, parsed)
  const input = await readDocument(parsed.positionals[0], ctx.io.stdin)
  ctx.file = input.label
  const reply = (await client.request('POST', '/api/v1/blueprints/validate', input.body)) as { data: ValidateResult }
  if (ctx.json) printJson(ctx, reply)
  else ctx.io.stdout.write(formatValidation(input.label, reply.data, ctx.colours))
  return reply.data.ok ? 0 : 1
}
