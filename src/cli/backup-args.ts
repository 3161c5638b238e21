import { parseArgs } from 'node:util'
import type { CliIo } from './context.js'

/**
 * Parses a local command's arguments (backup, restore, doctor: no --url, no --json): `-h/--help` and at most
 * `positionals` arguments. Returns the positionals, 'help', or a usage message (exit 2).
 */
export function parseLocal(
  argv: string[],
  positionals: number,
): { kind: 'args'; positionals: string[] } | { kind: 'help' } | { kind: 'usage'; message: string } {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      options: { help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    })
  } catch (err) {
    return { kind: 'usage', message: (err as Error).message.replace(/\. To specify a positional.*$/s, '') }
  }
  if (parsed.values.help) return { kind: 'help' }
  if (parsed.positionals.length > positionals) {
    return { kind: 'usage', message: `Unexpected argument: ${parsed.positionals[positionals]}` }
  }
  return { kind: 'args', positionals: parsed.positionals }
}

/** Prints a usage mistake with a pointer to --help; answers exit code 2. */
export function usageMistake(io: CliIo, command: string, message: string): number {
  io.stderr.write(`plinth ${command}: ${message}\nRun 'plinth ${command} --help' for usage.\n`)
  return 2
}
