#!/usr/bin/env node
// Runs Plinth from its TypeScript sources with no build step to remember (`npm ci && npm start`): on start
// the sources are transformed by esbuild into a cache keyed by their content (a fraction of a second, reused
// while nothing changes) and run as plain JavaScript. A runtime loader (tsx) would instead keep its own
// thread and ~50 MB resident for the whole life of the server.
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build, version as esbuildVersion } from 'esbuild'

const root = fileURLToPath(new URL('..', import.meta.url))
const sources = join(root, 'src')

/** Every runtime source file (tests and their helpers stay out). */
function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

const files = sourceFiles(sources).sort()
const hash = createHash('sha256')
  .update(esbuildVersion)
  .update(readFileSync(join(root, 'package.json')))
for (const file of files) hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0')
const cache = join(root, 'node_modules', '.cache', 'plinth')
const out = join(cache, hash.digest('hex').slice(0, 16))

if (!existsSync(join(out, 'src', 'main.js'))) {
  // Built aside and renamed into place, so a process starting at the same moment never sees half a tree.
  const building = `${out}.building-${process.pid}`
  await build({
    entryPoints: files,
    outdir: join(building, 'src'),
    outbase: sources,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'error',
  })
  // Modules read package.json beside src/ (the version).
  copyFileSync(join(root, 'package.json'), join(building, 'package.json'))
  try {
    renameSync(building, out)
  } catch {
    rmSync(building, { recursive: true, force: true }) // another process got there first
  }
  // Builds of sources that changed a day ago or more: a server still running one may load a module late.
  mkdirSync(cache, { recursive: true })
  const dayAgo = Date.now() - 86_400_000
  for (const name of readdirSync(cache)) {
    const path = join(cache, name)
    if (path !== out && statSync(path).mtimeMs < dayAgo) rmSync(path, { recursive: true, force: true })
  }
}

await import(pathToFileURL(join(out, 'src', 'main.js')).href)
