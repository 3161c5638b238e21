// One-way imports: lib ← modules ← http / app. Resolved against the file system, so `lib/http`
// is told apart from `src/http`. A module reaches another module only through its index.ts, and never
// one that imports it back (directly or round a longer loop).
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const defaultSrcDir = resolve(dirname(fileURLToPath(import.meta.url)), '../../src')

function layerOf(srcDir, file) {
  const rel = relative(srcDir, file).split(sep)
  if (rel[0] === '..') return null
  if (rel[0] === 'lib') return { layer: 'lib' }
  if (rel[0] === 'migrations') return { layer: 'migrations' }
  if (rel[0] === 'modules') return { layer: 'module', module: rel[1], rest: rel.slice(2).join('/') }
  if (rel[0] === 'http') return { layer: 'http' }
  return { layer: 'app' }
}

function refusal(from, to) {
  if (from.layer === 'app') return null
  if (to.layer === 'lib') return null
  if (from.layer === 'lib') return 'lib is generic: it imports nothing from modules, http, migrations or the app'
  if (from.layer === 'migrations') return to.layer === 'migrations' ? null : 'migrations import only lib'
  if (to.layer === 'module') {
    if (from.layer === 'module' && from.module === to.module) return null
    if (to.rest === 'index.ts' || to.rest === 'index.js') return null
    return `import module "${to.module}" through its index.ts, not its internals`
  }
  if (from.layer === 'module') return `modules import lib and other modules' index.ts only, not ${to.layer}`
  if (from.layer === 'http' && to.layer === 'http') return null
  return `http may not import ${to.layer}`
}

// The relative imports of each file on disk (type-only and dynamic ones included), kept while its mtime holds:
// an editor's long-lived ESLint sees edits, a CLI run reads each file once.
const importsByFile = new Map()

function importsOf(file) {
  const mtimeMs = statSync(file).mtimeMs
  const known = importsByFile.get(file)
  if (known?.mtimeMs === mtimeMs) return known.imports
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
  const imports = importedFiles
    .map((f) => f.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => resolve(dirname(file), name))
  importsByFile.set(file, { mtimeMs, imports })
  return imports
}

/** The other modules a module's source files (tests aside, as the rule itself) import, each with one file that does. */
function importedModules(srcDir, module) {
  const dir = join(srcDir, 'modules', module)
  const edges = new Map()
  let names
  try {
    names = readdirSync(dir, { recursive: true })
  } catch {
    return edges
  }
  for (const name of names) {
    if (!name.endsWith('.ts') || name.endsWith('.test.ts') || name.endsWith('.d.ts')) continue
    const file = join(dir, name)
    for (const target of importsOf(file)) {
      const to = layerOf(srcDir, target)
      if (to?.layer === 'module' && to.module !== module && !edges.has(to.module)) edges.set(to.module, file)
    }
  }
  return edges
}

/**
 * The shortest chain of imports on disk from module `start` back to module `home`, as { module, file } hops, or
 * null. `edgesOf` memoises importedModules for the file being linted, so its several imports share one walk.
 */
function pathBack(edgesOf, start, home) {
  const cameFrom = new Map([[start, null]])
  const queue = [start]
  while (queue.length > 0) {
    const module = queue.shift()
    for (const [next, file] of edgesOf(module)) {
      if (cameFrom.has(next)) continue
      cameFrom.set(next, { module, file })
      if (next === home) {
        const hops = []
        for (let at = home; cameFrom.get(at); at = cameFrom.get(at).module) hops.unshift(cameFrom.get(at))
        return hops
      }
      queue.push(next)
    }
  }
  return null
}

function loopMessage(srcDir, home, hops) {
  const chain = [home, ...hops.map((h) => h.module), home].join(' → ')
  const back = hops.map((h, i) => `${relative(srcDir, h.file)} imports "${hops[i + 1]?.module ?? home}"`).join(', ')
  return (
    `import loop ${chain}: ${back}. A module never imports a module that imports it; ` +
    'split out what both need, or pass it in (docs/architecture.md, "Adding a module")'
  )
}

export const layersPlugin = {
  rules: {
    'one-way-imports': {
      meta: {
        type: 'problem',
        // `src`: the source root (tests point it at a fixture tree).
        schema: [{ type: 'object', properties: { src: { type: 'string' } }, additionalProperties: false }],
      },
      create(context) {
        const srcDir = context.options[0]?.src ?? defaultSrcDir
        const from = layerOf(srcDir, context.filename)
        if (!from) return {}
        const edges = new Map()
        const edgesOf = (module) => {
          if (!edges.has(module)) edges.set(module, importedModules(srcDir, module))
          return edges.get(module)
        }
        const check = (node) => {
          const source = node.source?.value
          if (typeof source !== 'string' || !source.startsWith('.')) return
          const to = layerOf(srcDir, resolve(dirname(context.filename), source))
          const message = to && refusal(from, to)
          if (message) return context.report({ node: node.source, message })
          if (from.layer !== 'module' || to?.layer !== 'module' || to.module === from.module) return
          const hops = pathBack(edgesOf, to.module, from.module)
          if (hops) context.report({ node: node.source, message: loopMessage(srcDir, from.module, hops) })
        }
        return {
          ImportDeclaration: check,
          ExportNamedDeclaration: check,
          ExportAllDeclaration: check,
          ImportExpression: check,
        }
      },
    },
  },
}
