import { parseLocal, usageMistake } from './backup-args.js'
import { restoreBackup } from './backup/restore-backup.js'
import { backupSettings, postgresRefusal } from './backup/settings.js'
import { BackupError } from './backup/take-backup.js'
import type { CliIo } from './context.js'

const help = `Usage: plinth restore <dir>

Restores a backup made by plinth backup into DATA_DIR, which must be new or empty. Before writing anything it
checks the manifest, that this Plinth knows the backup's migration level, the secret key, and every file's
checksum; after copying, each database's PRAGMA integrity_check and row counts and every file's checksum.
Start the server on DATA_DIR afterwards (plinth serve).

Settings come from the environment: DATA_DIR, and SECRET_KEY when the backup was taken with one.

Options:
  -h, --help   print this help

Exit codes: 0 restored and verified; 1 refused or failed (DATA_DIR is left empty); 2 usage.`

/** `plinth restore <dir>` (docs/cli.md). */
export async function runRestore(argv: string[], io: CliIo): Promise<number> {
  const args = parseLocal(argv, 1)
  if (args.kind === 'help') return (io.stdout.write(`${help}\n`), 0)
  if (args.kind === 'usage') return usageMistake(io, 'restore', args.message)
  const [dir] = args.positionals
  if (!dir) return usageMistake(io, 'restore', 'Missing the backup directory')
  const settings = backupSettings(io.env)
  if (settings.postgres) return (io.stderr.write(`plinth restore: ${postgresRefusal}\n`), 1)
  try {
    const manifest = await restoreBackup(settings, dir)
    const rows = manifest.databases.reduce((sum, db) => sum + Object.values(db.tables).reduce((a, b) => a + b, 0), 0)
    io.stdout.write(
      `Restored ${manifest.databases.length} databases (${rows} rows) and ${manifest.files.length} files into ${settings.dataDir}\n` +
        `Verified: integrity_check ok, row counts and checksums match the manifest (backup of ${manifest.createdAt}, Plinth ${manifest.plinthVersion})\n`,
    )
    if (manifest.secretKey === 'environment') io.stdout.write('note: start the server with the same SECRET_KEY\n')
    if (manifest.storage === 's3') io.stdout.write('note: files were in the S3 bucket; the server reads them there\n')
    return 0
  } catch (err) {
    if (err instanceof BackupError) return (io.stderr.write(`plinth restore: ${err.message}\n`), 1)
    throw err
  }
}
