import pino, { type DestinationStream, type Logger } from 'pino'

export type { Logger }

/**
 * Paths that are censored wherever they appear in a log object. Request logs never carry headers or
 * bodies to begin with; this is the second line of defence for anything a module logs by mistake.
 */
const redactPaths = [
  'password',
  'token',
  'secret',
  'secretKey',
  'apiKey',
  'raw',
  'authorization',
  '*.password',
  '*.token',
  '*.secret',
  '*.secretKey',
  '*.secretAccessKey',
  '*.apiKey',
  '*.raw',
  '*.authorization',
  '*.headers.authorization',
  '*.headers.cookie',
]

export interface Loggers {
  /** For everything modules and the app log: secrets are censored by path wherever they appear. */
  log: Logger
  /** For the one line per request only. Its fields are built by the HTTP layer from safe values, so it
   * skips redaction, which would otherwise cost more than the rest of a small request. */
  access: Logger
}

const bufferBytes = 4096
const flushEveryMs = 200

/**
 * Creates the process loggers, both writing to one destination; tests pass their own to read it.
 * Stdout is buffered: lines go out in 4 KiB writes, and at least every 200 ms, so a busy server makes
 * one system call per few dozen requests instead of one each. Pino flushes the rest on exit; a line
 * is never more than 200 ms late.
 */
export function createLoggers(level: string, destination?: DestinationStream): Loggers {
  if (!destination) {
    const stdout = pino.destination({ dest: 1, sync: true, minLength: bufferBytes })
    setInterval(() => stdout.flush(), flushEveryMs).unref()
    destination = stdout
  }
  const log = pino(
    {
      level,
      base: undefined,
      redact: { paths: redactPaths, censor: '[redacted]' },
      serializers: { err: serializeError },
    },
    destination,
  )
  const access = pino({ level, base: undefined }, destination)
  return { log, access }
}

/** What the access log records of one answered request (never the query string, never a header). */
export interface RequestLine {
  readonly reqId: string
  readonly method: string | undefined
  readonly path: string
  readonly status: number
  readonly ms: number
}

/**
 * Writes the access log's per-request line, byte for byte what `access.info(line, 'request')` writes, to the
 * same destination. Built by hand because pino's generic serialiser was about half of that line's cost, and
 * the line is a few per cent of a small request (a GET by id). Strings go through JSON.stringify; the
 * request id is a checked token or a UUID, the numbers are numbers.
 */
export function requestLineWriter(access: Logger): (line: RequestLine) => void {
  const stream = (access as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym]!
  return (line) => {
    if (!access.isLevelEnabled('info')) return
    const method = line.method === undefined ? '' : `"method":${JSON.stringify(line.method)},`
    stream.write(
      `{"level":30,"time":${Date.now()},"reqId":${JSON.stringify(line.reqId)},${method}"path":${JSON.stringify(line.path)},"status":${line.status},"ms":${line.ms},"msg":"request"}\n`,
    )
  }
}

/** A single logger, for tools and tests that need no access log. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return createLoggers(level, destination).log
}

/** Errors are logged by type, code, message and stack; driver `detail` fields (which echo values) are dropped. */
function serializeError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) }
  const out: Record<string, unknown> = { type: err.name, message: err.message, stack: err.stack }
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string') out.code = code
  if (err.cause !== undefined) out.cause = serializeError(err.cause)
  return out
}
