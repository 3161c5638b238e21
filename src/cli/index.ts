import { UsageError } from './args.js'
import { ApiError } from './client.js'
import { createContext, printJson, type CliIo, type Context } from './context.js'
import { exportCommand } from './export.js'
import { help } from './help.js'
import { installCommand } from './install.js'
import { planCommand } from './plan.js'
import { formatDiagnostic, formatVerdict } from './print.js'
import type { Diagnostic, Verdict } from './types.js'
import { validateCommand } from './validate.js'

export type { CliIo } from './context.js'

const commands: Record<string, (argv: string[], ctx: Context) => Promise<number>> = {
  validate: validateCommand,
  plan: planCommand,
  install: installCommand,
  export: exportCommand,
}

/**
 * `plinth blueprint <command> …` against a running instance over HTTP (docs/cli.md). Returns the exit code:
 * 0 ok, 1 a failing document, a BLOCKED brick, an install not complete or an API error, 2 a usage mistake.
 */
export async function runBlueprint(argv: string[], io: CliIo): Promise<number> {
  const ctx = createContext(io)
  const [name, ...rest] = argv
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(`${help.blueprint}\n`)
    return 0
  }
  const command = name !== undefined && Object.hasOwn(commands, name) ? commands[name] : undefined
  if (!command) {
    io.stderr.write(`${name === undefined ? 'Missing a command' : `Unknown command: blueprint ${name}`}\n\n`)
    io.stderr.write(`${help.blueprint}\n`)
    return 2
  }
  try {
    return await command(rest, ctx)
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`plinth blueprint ${name}: ${err.message}\nRun 'plinth blueprint ${name} --help' for usage.\n`)
      return 2
    }
    if (err instanceof ApiError) {
      reportApiError(ctx, err)
      return 1
    }
    throw err
  }
}

/**
 * `error: <code>: <message>` on stderr, then what the details carry that a reader can act on: the document's
 * diagnostics (400 on install), the BLOCKED verdicts (409), an archive refusal's code.
 */
export function reportApiError(ctx: Context, err: ApiError): void {
  const { stderr } = ctx.io
  if (ctx.json && err.body !== undefined) printJson(ctx, err.body)
  const code = typeof err.details.code === 'string' ? ` (${err.details.code})` : ''
  stderr.write(`error: ${err.code}: ${err.message}${code}\n`)
  const file = ctx.file ?? 'document'
  if (Array.isArray(err.details.diagnostics)) {
    for (const d of err.details.diagnostics as Diagnostic[]) stderr.write(`${formatDiagnostic(file, d)}\n`)
  }
  if (Array.isArray(err.details.verdicts)) {
    for (const v of err.details.verdicts as Verdict[]) {
      stderr.write(`${formatVerdict({ ...v, changedPaths: v.changedPaths ?? [], warnings: v.warnings ?? [] })}\n`)
    }
  }
  if (Array.isArray(err.details.resources)) {
    for (const resource of err.details.resources) stderr.write(`  ${String(resource)}\n`)
  }
  if (Array.isArray(err.details.missingSecrets)) {
    stderr.write('Give each secret value in the environment as PLINTH_SECRET_<name>.\n')
  }
  if (err.code === 'unauthorized' && !ctx.hasToken) {
    stderr.write('Set PLINTH_TOKEN to a session token or an sk- key of the instance.\n')
  }
}
