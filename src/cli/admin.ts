import { parseArgs } from 'node:util'
import { ConfigError, loadConfig } from '../config.js'
import { isAppError } from '../lib/errors.js'
import { createLogger } from '../lib/log.js'
import { email as emailSchema, password as passwordSchema } from '../modules/users/index.js'
import { UsageError } from './args.js'
import { adminHelp } from './admin-help.js'
import type { CliIo } from './context.js'
import { createOwner } from './create-owner.js'
import { PromptCancelled, readSecret, type TerminalInput } from './secret-prompt.js'

/** The process's io, and the terminal a password is prompted on (process.stdin when it is one). */
export interface AdminIo extends CliIo {
  terminal?: TerminalInput
}

async function readAll(stream: AsyncIterable<Uint8Array | string>): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(Buffer.from(chunk))
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * The password: all of stdin with `--password-stdin` (one trailing newline dropped, as `echo` adds it), else
 * typed twice at a terminal prompt that does not echo. Never an argument: it would land in shell history and
 * in the process list. Throws UsageError when there is neither.
 */
async function readPassword(io: AdminIo, fromStdin: boolean): Promise<string> {
  if (fromStdin) {
    if (!io.stdin) throw new UsageError('No standard input to read the password from')
    return (await readAll(io.stdin)).replace(/\r?\n$/, '')
  }
  const terminal = io.terminal ?? (process.stdin.isTTY ? (process.stdin as TerminalInput) : undefined)
  if (!terminal) {
    throw new UsageError('Standard input is not a terminal: give the password on it with --password-stdin')
  }
  const first = await readSecret(terminal, io.stderr, 'Password: ')
  const again = await readSecret(terminal, io.stderr, 'Password (again): ')
  if (first !== again) throw new PasswordMismatch('the two passwords differ')
  return first
}

class PasswordMismatch extends Error {}

/** `plinth admin create --email E [--name N] [--password-stdin]`: the owner, straight in the database. */
async function createCommand(argv: string[], io: AdminIo): Promise<number> {
  let values: { email?: string; name?: string; 'password-stdin'?: boolean; help?: boolean }
  try {
    values = parseArgs({
      args: argv,
      options: {
        email: { type: 'string' },
        name: { type: 'string' },
        'password-stdin': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }).values
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message.replace(/\. To specify a positional.*$/s, '') : String(err))
  }
  if (values.help) {
    io.stdout.write(`${adminHelp.adminCreate}\n`)
    return 0
  }
  const email = values.email?.trim()
  if (!email) throw new UsageError('--email is required')
  if (!emailSchema.safeParse(email).success) throw new UsageError(`Not an email address: ${email}`)
  const name = (values.name ?? email.slice(0, email.indexOf('@'))).trim()
  if (name === '' || name.length > 200) throw new UsageError('--name must be 1 to 200 characters')

  let config
  try {
    config = loadConfig(io.env)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    io.stderr.write(`error: ${err.message}\n`)
    return 1
  }
  let password: string
  try {
    password = await readPassword(io, values['password-stdin'] === true)
  } catch (err) {
    if (err instanceof PromptCancelled) return fail(io, 'cancelled; nothing was changed')
    if (err instanceof PasswordMismatch) return fail(io, `${err.message}; nothing was changed`)
    throw err
  }
  // The API's own rule (POST /api/auth/sign-up/email), so the CLI accepts no password sign-up would refuse.
  const checked = passwordSchema.safeParse(password)
  if (!checked.success) return fail(io, `the password ${checked.error.issues[0]?.message ?? 'is not acceptable'}`)

  const log = createLogger('warn', { write: (line: string) => void io.stderr.write(line) })
  try {
    const owner = await createOwner(config, log, { email, password, name })
    io.stdout.write(
      `Created the owner ${owner.email ?? email} (${owner.id}), super_admin of the default project.\n` +
        'Start the server (plinth serve) and sign in with this email and password.\n',
    )
    return 0
  } catch (err) {
    if (isAppError(err) && (err.code === 'signup_forbidden' || err.code === 'already_exists')) {
      return fail(io, 'this instance already has accounts, and its first account is its owner; nothing was changed')
    }
    throw err
  }
}

function fail(io: CliIo, message: string): number {
  io.stderr.write(`error: ${message}\n`)
  return 1
}

/** `plinth admin <command>`: 0 ok, 1 refused (an owner exists, a weak password, a bad setting), 2 usage. */
export async function runAdmin(argv: string[], io: AdminIo): Promise<number> {
  const [name, ...rest] = argv
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(`${adminHelp.admin}\n`)
    return 0
  }
  if (name !== 'create') {
    io.stderr.write(
      `${name === undefined ? 'Missing a command' : `Unknown command: admin ${name}`}\n\n${adminHelp.admin}\n`,
    )
    return 2
  }
  try {
    return await createCommand(rest, io)
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    io.stderr.write(`plinth admin create: ${err.message}\nRun 'plinth admin create --help' for usage.\n`)
    return 2
  }
}
