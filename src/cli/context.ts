import { resolveBaseUrl, stringOption, flagOption, type Parsed } from './args.js'
import { createClient, type Client } from './client.js'
import { palette, wantsColour, type Palette } from './print.js'

/** What the CLI touches of the process, passed in (tests give their own). */
export interface CliIo {
  /** PLINTH_URL, PLINTH_TOKEN, PORT and NO_COLOR are read from it. */
  env: Record<string, string | undefined>
  stdout: { write(text: string): unknown; isTTY?: boolean }
  stderr: { write(text: string): unknown }
  stdin?: AsyncIterable<Uint8Array | string>
  fetch?: typeof fetch
}

/** One run of a subcommand: the io, colours for stdout, and what the error report needs. */
export interface Context {
  io: CliIo
  colours: Palette
  /** Set by the subcommand once read, so diagnostics in an error's details are printed under its name. */
  file?: string
  /** Set when --json was given: an error's raw body goes to stdout too. */
  json?: boolean
  /** Whether a credential was found (an unauthorized answer then says where one goes). */
  hasToken?: boolean
}

export function createContext(io: CliIo): Context {
  return { io, colours: palette(wantsColour(io.stdout.isTTY, io.env)) }
}

/** The client for --url (or PLINTH_URL), with PLINTH_TOKEN; notes --json on the context. */
export function clientFor(ctx: Context, parsed: Parsed): Client {
  ctx.json = flagOption(parsed, 'json')
  const token = ctx.io.env.PLINTH_TOKEN?.trim() || undefined
  ctx.hasToken = token !== undefined
  return createClient({
    baseUrl: resolveBaseUrl(stringOption(parsed, 'url'), ctx.io.env),
    token,
    ...(ctx.io.fetch ? { fetch: ctx.io.fetch } : {}),
  })
}

/** Writes a response as --json prints it. */
export function printJson(ctx: Context, body: unknown): void {
  ctx.io.stdout.write(`${JSON.stringify(body, null, 2)}\n`)
}

/** Prints a command's help; its exit code is 0. */
export function showHelp(ctx: Context, text: string): number {
  ctx.io.stdout.write(`${text}\n`)
  return 0
}
