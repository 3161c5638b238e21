import type { CliIo } from './context.js'

/** A top-level `plinth <name> …` command that is not the server itself: it returns its exit code. */
export type TopCommand = (argv: string[], io: CliIo) => Promise<number>

export interface TopCommandEntry {
  /** One line for `plinth --help`. */
  summary: string
  /** Imported when run: a client command must not load the server's modules first. */
  load: () => Promise<TopCommand>
}

/**
 * Every command beside `serve` and `migrate`, one entry each; `plinth --help` lists them in this order. A
 * command lives in its own file under src/cli/ and documents itself with `--help` (docs/cli.md).
 */
export const topCommands: Record<string, TopCommandEntry> = {
  blueprint: {
    summary: 'validate, plan, install or export blueprints on a running instance',
    load: async () => (await import('./index.js')).runBlueprint,
  },
  types: {
    summary: "write TypeScript types for the project's collections (from a running instance)",
    load: async () => (await import('./gen-types.js')).runTypes,
  },
  admin: {
    summary: "create the install's owner from the command line (no server needed)",
    load: async () => (await import('./admin.js')).runAdmin,
  },
  users: {
    summary: 'list users of a running instance, ban or unban one',
    load: async () => (await import('./users.js')).runUsers,
  },
  keys: {
    summary: 'create, list or revoke API keys on a running instance',
    load: async () => (await import('./keys.js')).runKeys,
  },
  backup: {
    summary: 'copy the SQLite databases, local files and secret key while the server runs',
    load: async () => (await import('./backup.js')).runBackup,
  },
  restore: {
    summary: 'restore a backup into an empty DATA_DIR, verified',
    load: async () => (await import('./restore.js')).runRestore,
  },
  doctor: {
    summary: 'check the configuration, database, Redis, storage and email',
    load: async () => (await import('./doctor.js')).runDoctor,
  },
}
