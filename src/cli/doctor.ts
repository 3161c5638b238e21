import { parseLocal, usageMistake } from './backup-args.js'
import type { CliIo } from './context.js'
import type { CheckResult } from './doctor/check.js'
import { checkConfiguration, checkSecretKey } from './doctor/configuration.js'
import { checkDatabase } from './doctor/database.js'
import { checkEmail, checkRedis } from './doctor/services.js'
import { checkStorage } from './doctor/storage.js'

const help = `Usage: plinth doctor

Checks what plinth serve would start with, from the same environment, and prints one line per check:
config (every setting), secret key, database (SQLite: DATA_DIR writable; PostgreSQL: a connection; and the
migration level), redis (when REDIS_URL is set: a PING), storage (local: the files directory writable; S3:
a probe object put, read and deleted) and email (SMTP: connect and log in; an email API: its host answers).
Nothing is sent, and no secret is printed.

Each line starts with ok, warn (works, but look) or FAIL (says what is wrong and what to do).

Options:
  -h, --help   print this help

Exit codes: 0 no FAIL; 1 at least one FAIL; 2 usage.`

/** `plinth doctor` (docs/cli.md): every check in turn, one line each; exit 1 when any FAILs. */
export async function runDoctor(argv: string[], io: CliIo): Promise<number> {
  const args = parseLocal(argv, 0)
  if (args.kind === 'help') return (io.stdout.write(`${help}\n`), 0)
  if (args.kind === 'usage') return usageMistake(io, 'doctor', args.message)

  const scrub = scrubberOf(io.env)
  const print = (r: CheckResult) => io.stdout.write(scrub(`${r.status.padEnd(5)} ${r.name.padEnd(11)} ${r.message}\n`))
  const results: CheckResult[] = []
  const report = (r: CheckResult) => (results.push(r), print(r))

  const { result, config } = checkConfiguration(io.env)
  report(result)
  report(checkSecretKey(io.env))
  if (config) {
    report(await checkDatabase(config))
    report(await checkRedis(config))
    report(await checkStorage(config))
    report(await checkEmail(config))
  } else {
    io.stdout.write('      the database, Redis, storage and email are checked once the configuration is valid\n')
  }
  const failed = results.filter((r) => r.status === 'FAIL').length
  io.stdout.write(failed === 0 ? 'No problems found.\n' : `${failed} ${failed === 1 ? 'check' : 'checks'} FAILED.\n`)
  return failed === 0 ? 0 : 1
}

/**
 * Belt and braces: the checks print no secret, and this removes any that a driver's message might still
 * carry (passwords in URLs, keys), so none reaches the terminal or a CI log.
 */
function scrubberOf(env: Record<string, string | undefined>): (text: string) => string {
  const secrets = new Set<string>()
  for (const name of [
    'SECRET_KEY',
    'S3_SECRET_ACCESS_KEY',
    'EMAIL_API_KEY',
    'EMAIL_RECEIPT_SECRET',
    'METRICS_TOKEN',
    'CF_API_TOKEN',
    'OPENAI_API_KEY',
    'GITHUB_CLIENT_SECRET',
    'GOOGLE_CLIENT_SECRET',
  ]) {
    const value = env[name]?.trim()
    if (value) secrets.add(value)
  }
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'SMTP_URL']) {
    const value = env[name]?.trim()
    if (!value) continue
    try {
      const url = new URL(value)
      if (url.password) {
        secrets.add(url.password)
        secrets.add(decodeURIComponent(url.password))
      }
    } catch {
      // not a URL: the config check reports it by its length only
    }
  }
  const list = [...secrets].filter((s) => s.length >= 3).sort((a, b) => b.length - a.length)
  return (text) => list.reduce((out, secret) => out.split(secret).join('***'), text)
}
