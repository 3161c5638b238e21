// One-way imports: lib ← modules ← http / app. Resolved against the file system, so `lib/http`
// is told apart from `src/http`. A module reaches another module only through its index.ts.
import { dirname, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const srcDir = resolve(dirname(fileURLToPath(import.meta.url)), '../../src')

function layerOf(file) {
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

export const layersPlugin = {
  rules: {
    'one-way-imports': {
      meta: { type: 'problem', schema: [] },
      create(context) {
        const from = layerOf(context.filename)
        if (!from) return {}
        const check = (node) => {
          const source = node.source?.value
          if (typeof source !== 'string' || !source.startsWith('.')) return
          const to = layerOf(resolve(dirname(context.filename), source))
          const message = to && refusal(from, to)
          if (message) context.report({ node: node.source, message })
        }
        return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check }
      },
    },
  },
}
