import { AppError } from '../../../lib/errors.js'
import { isSystemColumn } from './system-columns.js'

/**
 * Collection and field names: a lower-case letter, then up to 49 lower-case letters, digits or `_`.
 *
 * Decision (the spec names the code for collections only): a field name that breaks the same rule is
 * also 400 `invalid_name`, with `details: { field, index }`. A field named like a system column is
 * `reserved_field` even when it breaks the rule too (`_version`), since that is the more useful answer.
 */
export const namePattern = /^[a-z][a-z0-9_]{0,49}$/

/** Collection names the spec refuses (`api-keys` cannot pass the pattern but is listed for the better code). */
export const reservedCollectionNames: ReadonlySet<string> = new Set([
  'auth',
  'users',
  'roles',
  'permissions',
  'databases',
  'files',
  'settings',
  'plugins',
  'api-keys',
  'modules',
  'system',
  'schema',
  'health',
  'metrics',
  'hooks',
  'webhooks',
])

/** SQLite keeps table names beginning with this for itself (CREATE TABLE refuses them). */
export const reservedCollectionPrefix = 'sqlite_'

/**
 * What separates a collection's name from the rest in the names of the objects Plinth derives from it:
 * `<name>__search` (SQLite FTS5 table) and its triggers, `<name>__<field>__idx|uq`, `<name>__created_at__idx`,
 * `<name>__pkey`, `<name>__search__gin`. Decision (the spec's pattern allows it): a collection name may not
 * contain it, so no table is ever named like another collection's derived object (`qx__search` would be
 * `qx`'s search table, dropped and rebuilt with `qx`), and no two collections derive the same name.
 */
export const derivedNameSeparator = '__'

/**
 * Column names the databases keep for themselves: SQLite's `rowid` (which FTS5 refuses and the search
 * index joins on) and PostgreSQL's system columns (which CREATE TABLE refuses). Refused on every dialect
 * as `reserved_field`, so a definition means the same wherever the collection lives, instead of a 500
 * `ddl_error` on one database only.
 */
export const databaseReservedColumns: ReadonlySet<string> = new Set([
  'rowid',
  'ctid',
  'xmin',
  'xmax',
  'cmin',
  'cmax',
  'tableoid',
])

/**
 * Checks a collection name; throws AppError reserved_name or invalid_name (both 400). `sqlite` itself is
 * reserved like the `sqlite_` prefix: its derived names (`sqlite__created_at__idx`) would begin with it.
 */
export function checkCollectionName(name: unknown): string {
  if (typeof name === 'string' && reservedCollectionNames.has(name)) {
    throw new AppError('reserved_name', `Collection name "${name}" is reserved`, { name })
  }
  if (typeof name === 'string' && (name.startsWith(reservedCollectionPrefix) || name === 'sqlite')) {
    throw new AppError(
      'reserved_name',
      `Collection names "sqlite" and beginning with "${reservedCollectionPrefix}" are reserved by the database`,
      { name: name.slice(0, 60) },
    )
  }
  if (typeof name === 'string' && name.includes(derivedNameSeparator) && namePattern.test(name)) {
    throw new AppError(
      'reserved_name',
      `Collection names may not contain "${derivedNameSeparator}": double underscores name the objects Plinth derives from a collection (its search index, indexes, triggers)`,
      { name },
    )
  }
  if (typeof name !== 'string' || !namePattern.test(name)) {
    throw new AppError(
      'invalid_name',
      'Collection names are 1 to 50 characters: a lower-case letter, then lower-case letters, digits or _',
      {
        name: typeof name === 'string' ? name.slice(0, 60) : null,
      },
    )
  }
  return name
}

/** Checks the name of the field at `index`; throws AppError reserved_field or invalid_name (both 400). */
export function checkFieldName(name: unknown, index: number): string {
  if (typeof name === 'string' && isSystemColumn(name)) {
    throw new AppError('reserved_field', `Field name "${name}" is a system column`, { field: name, index })
  }
  if (typeof name === 'string' && databaseReservedColumns.has(name)) {
    throw new AppError('reserved_field', `Field name "${name}" is reserved by the database`, { field: name, index })
  }
  if (typeof name !== 'string' || !namePattern.test(name)) {
    throw new AppError(
      'invalid_name',
      `Field ${index}: field names are 1 to 50 characters: a lower-case letter, then lower-case letters, digits or _`,
      {
        field: typeof name === 'string' ? name.slice(0, 60) : null,
        index,
      },
    )
  }
  return name
}
