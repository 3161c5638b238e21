export { orderedIndexColumn, tableIdentifier, type DbHandle, type DbKind } from './handle.js'
export { describeTable, type ColumnInfo } from './introspect.js'
export { lockTransaction, withNamedLock } from './lock.js'
export { runMigrations, type Migration } from './migrate.js'
export {
  createDatabaseRegistry,
  isOwnDatabaseId,
  MAIN_BINDING,
  ownDatabaseId,
  type BindingDescriptor,
  type DatabaseRegistry,
  type ResolveBinding,
} from './registry.js'
export { translateDbError } from './translate-error.js'
export { openSqlite, runCompiled } from './sqlite.js'
export { createPgPool, openPostgres } from './postgres.js'
export { createStatisticsPacer, refreshStatistics, type StatisticsPacer } from './statistics.js'
