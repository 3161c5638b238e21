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

/** Creates the process logger; tests pass their own destination to read what was written. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: redactPaths, censor: '[redacted]' },
      serializers: { err: serializeError },
    },
    destination,
  )
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
