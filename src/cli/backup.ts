import { parseLocal, usageMistake } from './backup-args.js'
import { backupSettings, postgresRefusal } from './backup/settings.js'
import { BackupError, takeBackup } from './backup/take-backup.js'
import type { CliIo } from './context.js'

const help = `Usage: plinth backup <dir>

Copies every SQLite database of DATA_DIR (through SQLite's backup API), local storage's files and the
secret key into <dir>, a new or empty directory outside DATA_DIR, while the server keeps serving. Each
copied database is checked with PRAGMA integrity_check and by counting its rows; <dir>/manifest.json lists
what was copied, with row counts, checksums, the Plinth version and the migration level.

Settings come from the environment, as for plinth serve: DATA_DIR, DATABASE_URL (PostgreSQL: refused, see
docs/running.md), SECRET_KEY, S3_ENDPOINT (files in a bucket are not copied).

Options:
  -h, --help   print this help

Exit codes: 0 backed up and verified; 1 the backup failed (nothing is left in <dir>); 2 usage.`

/** `plinth backup <dir>` (docs/cli.md). */
export async function runBackup(argv: string[], io: CliIo): Promise<number> {
  const args = parseLocal(argv, 1)
  if (args.kind === 'help') return (io.stdout.write(`${help}\n`), 0)
  if (args.kind === 'usage') return usageMistake(io, 'backup', args.message)
  const [dir] = args.positionals
  if (!dir) return usageMistake(io, 'backup', 'Missing the backup directory')
  const settings = backupSettings(io.env)
  if (settings.postgres) return (io.stderr.write(`plinth backup: ${postgresRefusal}\n`), 1)
  try {
    const manifest = await takeBackup(settings, dir)
    const out = io.stdout
    for (const db of manifest.databases) {
      const rows = Object.values(db.tables).reduce((a, b) => a + b, 0)
      const tables = Object.keys(db.tables).length
      out.write(`${db.path}: ${tables} ${tables === 1 ? 'table' : 'tables'}, ${rows} rows, integrity ok\n`)
    }
    const bytes = manifest.files.reduce((a, f) => a + f.bytes, 0)
    out.write(`files: ${manifest.files.length} (${bytes} bytes)\n`)
    if (manifest.vanished.length > 0)
      out.write(`deleted while the backup ran, not copied: ${manifest.vanished.join(', ')}\n`)
    if (manifest.secretKey === 'environment') {
      out.write('note: SECRET_KEY comes from the environment and is not in the backup: keep it with the backup\n')
    }
    if (manifest.storage === 's3')
      out.write('note: files are in the S3 bucket and are not in the backup (docs/running.md)\n')
    out.write(
      `Backed up ${manifest.databases.length} databases and ${manifest.files.length} files to ${dir} (migration ${manifest.migration.last ?? 'none'}, Plinth ${manifest.plinthVersion})\n`,
    )
    return 0
  } catch (err) {
    if (err instanceof BackupError) return (io.stderr.write(`plinth backup: ${err.message}\n`), 1)
    throw err
  }
}
