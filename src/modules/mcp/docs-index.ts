import Database from 'better-sqlite3'
import { existsSync, statSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isAppError } from '../../lib/errors.js'
import { ftsExpression } from '../search-indexes/index.js'

/** One search result: the page, its title, a plain-text extract of about 30 words around the match. */
export interface DocHit {
  slug: string
  title: string
  snippet: string
  /** Relevance, higher is better (FTS5 bm25 negated; only comparable within one answer). */
  score: number
}

/** One page as written: `markdown` is the file's text, unchanged. */
export interface DocPage {
  slug: string
  title: string
  markdown: string
}

/** The project's own documentation pages, held in memory and searchable (search_docs / get_doc_page). */
export interface DocsIndex {
  /** Ranked full-text search; the query is plain words (never FTS5 syntax); [] when it has no word. */
  search(query: string, limit?: number): DocHit[]
  /** The page with exactly this slug among the indexed ones, else null. Never touches the file system. */
  page(slug: string): DocPage | null
  /** Frees the in-memory database; search throws afterwards. */
  close(): void
}

const DEFAULT_LIMIT = 10
const MAX_LIMIT = 50
const TITLE_WEIGHT = 10
const SNIPPET_TOKENS = 30

/**
 * Reads every `*.md` under `dir` (sub-folders too; symbolic links and dot-names are skipped) into an
 * in-memory SQLite FTS5 table. Slug: the path relative to `dir` with `/` separators and no `.md`
 * (`operations`, `decisions/036-r2-sql`). Title: the first `# ` heading outside code, else the slug.
 * A missing `dir` gives an empty index (a deployment without docs/ still starts); a file that cannot be
 * read rejects.
 */
export async function createDocsIndex(options: { dir: string }): Promise<DocsIndex> {
  const pages = new Map<string, DocPage>()
  const bodies = new Map<string, string>()
  for (const file of await markdownFiles(options.dir)) {
    const slug = relative(options.dir, file).split(sep).join('/').slice(0, -'.md'.length)
    const markdown = await readFile(file, 'utf8')
    const heading = titleOf(markdown)
    pages.set(slug, { slug, title: heading?.title ?? slug, markdown })
    bodies.set(slug, plainText(markdown, heading?.line ?? -1))
  }

  const db = new Database(':memory:')
  // porter: "quotas" finds "quota"; remove_diacritics: "resume" finds "résumé".
  db.exec(
    `create virtual table docs using fts5(slug unindexed, title, body, tokenize = 'porter unicode61 remove_diacritics 2')`,
  )
  const insert = db.prepare('insert into docs (slug, title, body) values (?, ?, ?)')
  db.transaction(() => {
    for (const page of pages.values()) insert.run(page.slug, page.title, bodies.get(page.slug))
  })()
  const query = db.prepare<[string, number], { slug: string; title: string; snippet: string; rank: number }>(
    `select slug, title, snippet(docs, 2, '', '', '…', ${SNIPPET_TOKENS}) as snippet, bm25(docs, 0, ${TITLE_WEIGHT}, 1) as rank
       from docs where docs match ? order by rank limit ?`,
  )

  return {
    search(text, limit) {
      const expression = typeof text === 'string' ? matchExpression(text) : null
      if (expression === null) return []
      return query.all(expression, clampLimit(limit)).map((row) => ({
        slug: row.slug,
        title: row.title,
        snippet: row.snippet.replace(/\s+/g, ' ').trim(),
        score: -row.rank,
      }))
    },
    page(slug) {
      const page = typeof slug === 'string' ? pages.get(slug) : undefined
      return page ? { ...page } : null
    },
    close() {
      if (db.open) db.close()
    },
  }
}

/**
 * The repository's docs/ folder, found from this file's location: the nearest folder above it holding
 * both `package.json` and `docs/`. That is the checkout's root when running from src/ (tsx, vitest) and
 * also from the compiled copy `npm start` runs (bin/plinth.js builds src/ into
 * node_modules/.cache/plinth/<hash>/src with a package.json but no docs/ beside it, so the walk goes on up
 * to the checkout). Falls back to `<this file>/../../../docs` when nothing is found.
 */
export function defaultDocsDir(): string {
  const here = dirname(fileURLToPath(import.meta.url))
  return findDocsDir(here) ?? join(here, '..', '..', '..', 'docs')
}

const shared = new Map<string, Promise<DocsIndex>>()

/**
 * The index of `dir` shared by every server in this process (built once: about 200 ms for the project's
 * docs, which do not change while it runs). Its `close` does nothing; the index lives as long as the process.
 */
export function sharedDocsIndex(dir: string = defaultDocsDir()): Promise<DocsIndex> {
  let opened = shared.get(dir)
  if (!opened) {
    opened = createDocsIndex({ dir }).then((index) => ({
      search: (query, limit) => index.search(query, limit),
      page: (slug) => index.page(slug),
      close: () => {},
    }))
    // A failed build is not kept: the next server tries again.
    opened.catch(() => shared.delete(dir))
    shared.set(dir, opened)
  }
  return opened
}

/** The `docs/` of the nearest folder at or above `start` that holds both `package.json` and `docs/`. */
export function findDocsDir(start: string): string | null {
  let dir = start
  for (;;) {
    const docs = join(dir, 'docs')
    if (existsSync(join(dir, 'package.json')) && isDirectory(docs)) return docs
    const parent = dirname(dir)
    if (parent === dir) return null
    dir = parent
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

async function markdownFiles(dir: string): Promise<string[]> {
  let entries
  try {
    entries = await readdir(dir, { withFileTypes: true })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
  const files: string[] = []
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith('.')) continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) files.push(...(await markdownFiles(path)))
    else if (entry.isFile() && entry.name.endsWith('.md')) files.push(path)
  }
  return files
}

/**
 * The user's text as an FTS5 expression of quoted words and phrases (search-indexes' ftsExpression), so
 * FTS5's operators are searched as words. A quote left open is read as no quote at all rather than an
 * error; null when there is no word to search for.
 */
function matchExpression(text: string): string | null {
  for (const candidate of [text, text.replaceAll('"', ' ')]) {
    try {
      return ftsExpression(candidate)
    } catch (err) {
      if (!isAppError(err)) throw err
    }
  }
  return null
}

function clampLimit(limit: number | undefined): number {
  if (typeof limit !== 'number' || !Number.isFinite(limit)) return DEFAULT_LIMIT
  return Math.min(MAX_LIMIT, Math.max(1, Math.floor(limit)))
}

/** The first level-one ATX heading outside fenced code, its inline markup removed, and its line. */
function titleOf(markdown: string): { title: string; line: number } | null {
  let fence: string | null = null
  for (const [index, line] of markdown.split(/\r?\n/).entries()) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1]
    if (marker) {
      if (fence === null) fence = marker[0]!
      else if (marker[0] === fence) fence = null
      continue
    }
    if (fence !== null) continue
    const heading = /^\s{0,3}# +(.*?)(?: +#+)?\s*$/.exec(line)
    const title = heading?.[1] ? inlineText(heading[1]) : ''
    if (title) return { title, line: index }
  }
  return null
}

/**
 * What a reader sees of a page below its title (line `titleLine`, already in the title column), for
 * matching and snippets: markup gone, code kept as text.
 */
function plainText(markdown: string, titleLine: number): string {
  const lines: string[] = []
  for (const [index, line] of markdown.split(/\r?\n/).entries()) {
    if (index === titleLine) continue
    if (/^\s{0,3}(`{3,}|~{3,})/.test(line)) continue // fence lines; the code between them stays
    if (/^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(line)) continue // table rules
    const text = line
      .replace(/^\s{0,3}#{1,6}\s+/, '') // headings
      .replace(/^\s*(?:>\s?)+/, '') // quotes
      .replace(/^\s*(?:[-*+]|\d+[.)])\s+/, '') // list items
      .replace(/\|/g, ' ') // table cells
    lines.push(inlineText(text))
  }
  return lines.join('\n').replace(/<!--[\s\S]*?-->/g, ' ')
}

function inlineText(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1') // reference links
    .replace(/<(https?:[^>\s]+)>/g, '$1') // autolinks
    .replace(/<\/?[a-z][a-z0-9-]*(?:\s[^<>]*)?\/?>/gi, ' ') // html tags
    .replace(/(\*{1,3}|_{2})(\S(?:.*?\S)?)\1/g, '$2') // emphasis (single _ is kept: snake_case names)
    .replace(/`+/g, '')
    .trim()
}
