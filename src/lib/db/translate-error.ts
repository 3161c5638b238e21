import { AppError } from '../errors.js'
import { isBlockedAddressError } from '../outbound/index.js'

/**
 * The one place where SQLite and PostgreSQL driver errors become our codes.
 * Messages name columns, never values: a driver's detail can carry the offending value.
 */
export function translateDbError(err: unknown): AppError {
  if (err instanceof AppError) return err
  const e = err as { code?: unknown; message?: unknown; severity?: unknown }
  const code = typeof e.code === 'string' ? e.code : ''
  const message = typeof e.message === 'string' ? e.message : ''
  if (code.startsWith('SQLITE_')) return fromSqlite(code, message, err)
  if (/^[0-9A-Z]{5}$/.test(code) && e.severity !== undefined) return fromPostgres(code, err)
  if (connectionCodes.has(code)) return unavailable(err)
  // A guarded binding whose host now resolves to a private address (lib/outbound): not transient.
  if (isBlockedAddressError(err))
    return new AppError(
      'service_unavailable',
      'The database is on an address this server may not reach',
      {},
      { cause: err },
    )
  return new AppError('internal', 'Database error', {}, { cause: err })
}

const connectionCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'EPIPE'])

function fromSqlite(code: string, message: string, cause: unknown): AppError {
  const columns = sqliteColumns(message)
  switch (code) {
    case 'SQLITE_CONSTRAINT_UNIQUE':
    case 'SQLITE_CONSTRAINT_PRIMARYKEY':
      return new AppError('already_exists', uniqueMessage(columns), { fields: columns }, { cause })
    case 'SQLITE_CONSTRAINT_NOTNULL':
      return new AppError(
        'missing_field',
        `Missing required field: ${columns.join(', ')}`,
        { fields: columns },
        { cause },
      )
    case 'SQLITE_CONSTRAINT_FOREIGNKEY':
      return new AppError('conflict', 'A related record prevents this change', {}, { cause })
    case 'SQLITE_CONSTRAINT_CHECK':
      return new AppError('validation_error', 'A value failed a check constraint', {}, { cause })
  }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return unavailable(cause)
  if (/^SQLITE_(FULL|IOERR|CANTOPEN|READONLY|NOMEM)/.test(code)) return unavailable(cause)
  return new AppError('internal', 'Database error', {}, { cause })
}

/**
 * "UNIQUE constraint failed: t.a, t.b" → ["a", "b"]. A unique expression index (a kv field, a key of a
 * JSON document) is reported by name, "index 't__a__uq'": its field is the part before `__uq`.
 */
function sqliteColumns(message: string): string[] {
  const list = message.split(' failed: ')[1]
  if (!list) return []
  const index = /^index '[a-z][a-z0-9_]*?__([a-z][a-z0-9_]*)__uq'$/.exec(list.trim())
  if (index) return [index[1]!]
  if (list.trim().startsWith('index ')) return []
  return list
    .split(',')
    .map((c) => c.trim().split('.').pop() ?? '')
    .filter(Boolean)
}

function fromPostgres(code: string, cause: unknown): AppError {
  const e = cause as { column?: string; detail?: string }
  switch (code) {
    case '23505': {
      const columns = postgresKeyColumns(e.detail)
      return new AppError('already_exists', uniqueMessage(columns), { fields: columns }, { cause })
    }
    case '23502': {
      const columns = e.column ? [e.column] : []
      return new AppError(
        'missing_field',
        `Missing required field: ${columns.join(', ')}`,
        { fields: columns },
        { cause },
      )
    }
    case '23503':
      return new AppError('conflict', 'A related record prevents this change', {}, { cause })
    case '23514':
      return new AppError('validation_error', 'A value failed a check constraint', {}, { cause })
    case '40001':
    case '40P01':
      return new AppError('conflict', 'A concurrent change conflicted with this one; retry', {}, { cause })
    case '42P07':
    case '42701':
    case '42710':
      return new AppError('already_exists', 'The object already exists', {}, { cause })
    case '22001':
    case '22003':
    case '22007':
    case '22008':
    case '22P02':
      return new AppError('invalid_field', 'A value does not fit its column type', {}, { cause })
  }
  if (code.startsWith('08') || code.startsWith('53') || code === '57014' || code.startsWith('57P'))
    return unavailable(cause)
  return new AppError('internal', 'Database error', {}, { cause })
}

/**
 * `Key (a, b)=(1, 2) already exists.` → ["a", "b"]; the values are dropped. An expression index over keys
 * of a JSON document (a kv field: `Key ((doc ->> 'a'::text))=…`) names those keys.
 */
function postgresKeyColumns(detail: string | undefined): string[] {
  const keys =
    detail?.startsWith('Key (') && detail.includes('->')
      ? [...(detail.split(')=(')[0] ?? '').matchAll(/->>? '([a-z][a-z0-9_]*)'::text/g)].map((m) => m[1]!)
      : []
  if (keys.length > 0) return keys
  const match = detail?.match(/^Key \(([^)]*)\)=/)
  return match?.[1] ? match[1].split(',').map((c) => c.trim().replace(/^"|"$/g, '')) : []
}

function uniqueMessage(columns: string[]): string {
  return columns.length > 0 ? `A record with this ${columns.join(', ')} already exists` : 'This record already exists'
}

function unavailable(cause: unknown): AppError {
  return new AppError(
    'service_unavailable',
    'The database is busy or unreachable; retry shortly',
    {},
    {
      cause,
      headers: { 'Retry-After': '1' },
    },
  )
}
