import { parseArgs } from 'node:util'

/** A mistake in how the command was called: printed with a pointer to --help, exit 2. */
export class UsageError extends Error {}

type OptionSpec = { type: 'string' | 'boolean'; short?: string; multiple?: boolean }
export type OptionSpecs = Record<string, OptionSpec>
type Value = string | boolean | (string | boolean)[] | undefined

/** What parseCommand found: option values by name and the positional arguments. */
export interface Parsed {
  values: Record<string, Value>
  positionals: string[]
}

/** Options every blueprint subcommand takes. */
export const commonOptions: OptionSpecs = {
  url: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
}

/** Options of the subcommands that send a document to be planned (plan, install). */
export const planOptions: OptionSpecs = {
  param: { type: 'string', multiple: true },
  assemblies: { type: 'string', multiple: true },
  'secrets-provided': { type: 'string', multiple: true },
}

/**
 * Parses `argv` strictly against `options` (plus the common ones): an unknown flag, a missing value or more
 * than `maxPositionals` arguments is a UsageError.
 */
export function parseCommand(argv: string[], options: OptionSpecs, maxPositionals: number): Parsed {
  let parsed: Parsed
  try {
    parsed = parseArgs({ args: argv, options: { ...commonOptions, ...options }, allowPositionals: true, strict: true })
  } catch (err) {
    // parseArgs's messages name the flag ("Unknown option '--nope'"); its hint about `--` does not apply here.
    throw new UsageError(err instanceof Error ? err.message.replace(/\. To specify a positional.*$/s, '') : String(err))
  }
  if (parsed.positionals.length > maxPositionals) {
    throw new UsageError(`Unexpected argument: ${parsed.positionals[maxPositionals]}`)
  }
  return parsed
}

/**
 * Parses a command whose flags are open-ended (export: one flag per kind, passed on as query parameters):
 * every `--name` not in `options` is taken as a string (repeatable) when a value follows it (`--name v` or
 * `--name=v`) and as a boolean otherwise. Returns the parse and the names of those extra flags.
 */
export function parseOpenCommand(
  argv: string[],
  options: OptionSpecs,
  maxPositionals: number,
): { parsed: Parsed; extra: string[] } {
  const known = { ...commonOptions, ...options }
  const extra: OptionSpecs = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') break
    const match = /^--([^=]+)(=?)/.exec(arg)
    if (!match || match[1]! in known) continue
    const name = match[1]!
    const next = argv[i + 1]
    const takesValue = match[2] === '=' || (next !== undefined && !next.startsWith('-'))
    // A flag given once with a value and once without is a string; parseArgs says so if that is wrong.
    if (!(name in extra) || takesValue) extra[name] = { type: takesValue ? 'string' : 'boolean', multiple: true }
  }
  return { parsed: parseCommand(argv, { ...options, ...extra }, maxPositionals), extra: Object.keys(extra) }
}

/** A string option's value (the last one when repeated). */
export function stringOption(parsed: Parsed, name: string): string | undefined {
  const value = parsed.values[name]
  const last = Array.isArray(value) ? value.at(-1) : value
  return typeof last === 'string' ? last : undefined
}

/** A boolean option. */
export function flagOption(parsed: Parsed, name: string): boolean {
  return parsed.values[name] === true
}

/** A list option: every value given, each split on commas, blanks dropped (`--a x,y --a z` → [x, y, z]). */
export function listOption(parsed: Parsed, name: string): string[] | undefined {
  const value = parsed.values[name]
  if (value === undefined) return undefined
  const values = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string')
  return values.flatMap((v) => v.split(',').map((s) => s.trim())).filter((s) => s !== '')
}

/** `--param k=v` values as an object of strings (the last wins); a value without `=` or a key is a UsageError. */
export function paramsOption(parsed: Parsed): Record<string, string> | undefined {
  const value = parsed.values.param
  if (value === undefined) return undefined
  const params: Record<string, string> = {}
  for (const entry of Array.isArray(value) ? value : [value]) {
    const text = String(entry)
    const eq = text.indexOf('=')
    if (eq <= 0) throw new UsageError(`--param takes name=value, not "${text}"`)
    params[text.slice(0, eq).trim()] = text.slice(eq + 1)
  }
  return params
}

/** `search-indexes` → `searchIndexes`: flags are written kebab-case, the export's query is camelCase. */
export function camelCase(flag: string): string {
  return flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())
}

/** Server default port when neither --url nor PLINTH_URL says otherwise (config/settings.ts: PORT). */
const defaultPort = '8090'

/**
 * The instance's base URL: --url, else PLINTH_URL, else http://127.0.0.1:<PORT or 8090>; trailing slashes
 * dropped. Anything but an http(s) URL is a UsageError.
 */
export function resolveBaseUrl(flag: string | undefined, env: Record<string, string | undefined>): string {
  const raw = flag || env.PLINTH_URL?.trim() || `http://127.0.0.1:${env.PORT?.trim() || defaultPort}`
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UsageError(`Not a URL: ${raw}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`Not an http(s) URL: ${raw}`)
  return url.href.replace(/\/+$/, '')
}
