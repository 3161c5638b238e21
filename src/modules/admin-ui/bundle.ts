import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { build, version as esbuildVersion } from 'esbuild'

/** One built file, ready to serve in each encoding. */
export interface Asset {
  readonly type: string
  readonly body: Buffer
  readonly gzip: Buffer
  readonly brotli: Buffer
}

/** The admin UI as served: its assets by content-hashed name, and the two the page loads. */
export interface AdminUiBundle {
  readonly assets: ReadonlyMap<string, Asset>
  readonly script: string
  readonly style: string
}

interface Manifest {
  script: string
  style: string
}

const types: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
}

/**
 * The checkout's root: the first directory up from here with both `package.json` and `ui/src/main.tsx`
 * (from src/ under tsx and vitest, and from the copy bin/plinth.js builds into node_modules/.cache).
 */
export function checkoutRoot(from: string = dirname(fileURLToPath(import.meta.url))): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'ui', 'src', 'main.tsx'))) return dir
    if (dirname(dir) === dir) return null
  }
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return filesUnder(path)
    return entry.name.endsWith('.test.ts') || entry.name.endsWith('.test.tsx') ? [] : [path]
  })
}

/** What the bundle is made of: the UI's sources, the client package's, esbuild and the lockfile. */
function contentKey(root: string): string {
  const hash = createHash('sha256').update(esbuildVersion)
  for (const file of [join(root, 'package-lock.json'), join(root, 'ui', 'tsconfig.json')])
    if (existsSync(file)) hash.update(readFileSync(file))
  const sources = [...filesUnder(join(root, 'ui', 'src')), ...filesUnder(join(root, 'packages', 'client', 'src'))]
  for (const file of sources.sort())
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0')
  return hash.digest('hex').slice(0, 16)
}

async function buildInto(root: string, out: string): Promise<void> {
  const building = `${out}.building-${process.pid}-${Date.now()}`
  const result = await build({
    entryPoints: { app: join(root, 'ui', 'src', 'main.tsx') },
    outdir: building,
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    alias: { '@plinth/client': join(root, 'packages', 'client', 'src', 'index.ts') },
    metafile: true,
    absWorkingDir: root,
    legalComments: 'none',
    logLevel: 'error',
  })
  const outputs = Object.keys(result.metafile.outputs).map((p) => relative(building, join(root, p)))
  const named = (ext: string) => {
    const found = outputs.find((o) => o.startsWith('app-') && o.endsWith(ext))
    if (!found) throw new Error(`the admin UI build made no ${ext} file`)
    return found
  }
  const manifest: Manifest = { script: named('.js'), style: named('.css') }
  writeFileSync(join(building, 'manifest.json'), JSON.stringify(manifest))
  try {
    renameSync(building, out)
  } catch {
    rmSync(building, { recursive: true, force: true }) // another process got there first
  }
}

function load(out: string): AdminUiBundle {
  const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as Manifest
  const assets = new Map<string, Asset>()
  for (const name of readdirSync(out)) {
    const ext = name.slice(name.lastIndexOf('.'))
    const type = types[ext]
    if (!type) continue
    const body = readFileSync(join(out, name))
    assets.set(name, {
      type,
      body,
      gzip: gzipSync(body, { level: 9 }),
      brotli: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    })
  }
  return { assets, script: manifest.script, style: manifest.style }
}

/** Builds of sources that changed a day ago or more (as bin/plinth.js does with the server's). */
function forgetOldBuilds(cache: string, keep: string): void {
  const dayAgo = Date.now() - 86_400_000
  for (const name of readdirSync(cache)) {
    const path = join(cache, name)
    if (path !== keep && statSync(path).mtimeMs < dayAgo) rmSync(path, { recursive: true, force: true })
  }
}

const built = new Map<string, Promise<AdminUiBundle>>()

/**
 * The admin UI bundle for this checkout (decision 078): built by esbuild into
 * node_modules/.cache/plinth-ui/<content key> when its sources changed (about a second), else read from
 * there; built once per process. Throws when the checkout has no ui/ (a packaged install without it).
 */
export function adminUiBundle(root: string | null = checkoutRoot()): Promise<AdminUiBundle> {
  if (!root) return Promise.reject(new Error('the admin UI sources (ui/src) were not found'))
  const key = contentKey(root)
  let bundle = built.get(key)
  if (!bundle) {
    const cache = join(root, 'node_modules', '.cache', 'plinth-ui')
    const out = join(cache, key)
    bundle = (async () => {
      if (!existsSync(join(out, 'manifest.json'))) {
        mkdirSync(cache, { recursive: true })
        await buildInto(root, out)
        forgetOldBuilds(cache, out)
      }
      return load(out)
    })()
    bundle.catch(() => built.delete(key))
    built.set(key, bundle)
  }
  return bundle
}
