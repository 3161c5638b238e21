import { closeSync, openSync, readSync, readdirSync } from 'node:fs'
import { join, relative, sep } from 'node:path'

/** What a backup takes from DATA_DIR: the SQLite databases (through the backup API) and every other file (copied). */
export interface DataDirListing {
  /** Relative paths (with `/`) of SQLite database files, system.db first. */
  readonly databases: string[]
  /** Relative paths of the other files: objects of local storage, their metadata, the secret key. */
  readonly files: string[]
}

/**
 * Left out, each for a reason the docs give: unfinished uploads (`files-tmp`), caches rebuilt from object
 * storage on demand (search index builds, published r2_sql versions) and temp files of work in progress.
 */
const skippedDirs = ['files-tmp', 'search-indexes', 'r2-sql/published', 'r2-sql/tmp']
/** Directories whose files are objects, copied as bytes whatever they hold (r2_sql versions are SQLite files). */
const objectDirs = ['files', 'files-meta']
/** A database's companions: its content reaches the copy through the backup API. */
const companions = /-(wal|shm|journal)$/

const sqliteHeader = Buffer.from('SQLite format 3\0', 'latin1')

/** Whether a file starts with SQLite's header (an empty file is not a database). */
export function isSqliteFile(path: string): boolean {
  const fd = openSync(path, 'r')
  try {
    const head = Buffer.alloc(sqliteHeader.length)
    return readSync(fd, head, 0, head.length, 0) === head.length && head.equals(sqliteHeader)
  } finally {
    closeSync(fd)
  }
}

const under = (path: string, dirs: readonly string[]) => dirs.some((d) => path === d || path.startsWith(`${d}/`))

/** Walks DATA_DIR and sorts what it holds into databases and files; `exclude` (the backup's own directory) is not entered. */
export function listDataDir(dataDir: string, exclude?: string): DataDirListing {
  const databases: string[] = []
  const files: string[] = []
  const walk = (dir: string) => {
    let entries
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch (err) {
      // A directory removed while we walk (a dropped collection's) has nothing left to copy.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
      throw err
    }
    for (const entry of entries) {
      const path = join(dir, entry.name)
      const rel = relative(dataDir, path).split(sep).join('/')
      if (path === exclude || under(rel, skippedDirs)) continue
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile() && !companions.test(rel)) {
        if (!under(rel, objectDirs) && safeIsSqlite(path)) databases.push(rel)
        else files.push(rel)
      }
    }
  }
  walk(dataDir)
  databases.sort((a, b) => (a === 'system.db' ? -1 : b === 'system.db' ? 1 : a < b ? -1 : a > b ? 1 : 0))
  files.sort()
  return { databases, files }
}

function safeIsSqlite(path: string): boolean {
  try {
    return isSqliteFile(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw err
  }
}
