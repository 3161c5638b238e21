import { UsageError } from './args.js'
import { ApiError } from './client.js'
import { createContext, printJson, type CliIo, type Context } from './context.js'

type Command = (argv: string[], ctx: Context) => Promise<number>

/**
 * Runs one client command (`plinth types`, `plinth users list`, …) with the house exit codes: a UsageError is
 * 2 with a pointer to --help, an API refusal 1 with its code and status (`error: forbidden (403): …`).
 */
export async function runClientCommand(name: string, argv: string[], io: CliIo, command: Command): Promise<number> {
  const ctx = createContext(io)
  try {
    return await command(argv, ctx)
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`plinth ${name}: ${err.message}\nRun 'plinth ${name} --help' for usage.\n`)
      return 2
    }
    if (err instanceof ApiError) {
      if (ctx.json && err.body !== undefined) printJson(ctx, err.body)
      const status = err.status === null ? '' : ` (${err.status})`
      io.stderr.write(`error: ${err.code}${status}: ${err.message}\n`)
      if (err.code === 'unauthorized' && !ctx.hasToken) {
        io.stderr.write('Set PLINTH_TOKEN to a session token or an sk- key of the instance.\n')
      }
      return 1
    }
    throw err
  }
}

/**
 * `plinth <group> <sub> …` (users, keys): dispatches to the subcommand, `--help` (or none) prints the group's
 * help; an unknown subcommand is 2.
 */
export function runGroup(group: string, subcommands: Record<string, Command>, help: string) {
  return async (argv: string[], io: CliIo): Promise<number> => {
    const [name, ...rest] = argv
    if (name === '--help' || name === '-h' || name === 'help') {
      io.stdout.write(`${help}\n`)
      return 0
    }
    const command = name !== undefined && Object.hasOwn(subcommands, name) ? subcommands[name] : undefined
    if (!command) {
      io.stderr.write(`${name === undefined ? 'Missing a command' : `Unknown command: ${group} ${name}`}\n\n${help}\n`)
      return 2
    }
    return runClientCommand(`${group} ${name}`, rest, io, command)
  }
}
