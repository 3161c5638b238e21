import { isMap, isScalar, isSeq, type Node } from 'yaml'
import { diagnostic, type Diagnostic } from './diagnostics.js'
import type { EnvelopeReadContext } from './params.js'
import { offsetOf } from './yaml-read.js'

/** One assembly: a named group of bricks an installer may select; a required one is always installed. */
export interface AssemblyDecl {
  readonly key: string
  readonly title: string
  readonly required: boolean
  readonly bricks: readonly string[]
  readonly line: number
  /** The line of each listed brick id, in the same order as `bricks`. */
  readonly brickLines: readonly number[]
}

const assemblyKey = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/
const assemblyKeys = new Set(['title', 'required', 'bricks'])

/** The envelope's `assemblies` map: key → {title, required?, bricks}; every problem is `assemblies.invalid`. */
export function readAssemblies(node: Node | null | undefined, ctx: EnvelopeReadContext): AssemblyDecl[] {
  const out: AssemblyDecl[] = []
  if (node === undefined || node === null || (isScalar(node) && node.value === null)) return out
  if (!isMap(node)) {
    ctx.report(
      diagnostic('assemblies.invalid', 'assemblies must be a mapping of key to assembly', ctx.lineAt(offsetOf(node))),
    )
    return out
  }
  for (const pair of node.items) {
    const key = String((pair.key as { value?: unknown }).value)
    const line = ctx.lineAt(offsetOf(pair.key))
    const assembly = readAssembly(key, line, pair.value as Node | null, ctx)
    if (assembly) out.push(assembly)
  }
  return out
}

function readAssembly(key: string, line: number, node: Node | null, ctx: EnvelopeReadContext): AssemblyDecl | null {
  const refuse = (message: string, at = line) => {
    ctx.report(diagnostic('assemblies.invalid', message, at))
    return null
  }
  if (!assemblyKey.test(key)) return refuse(`the assembly key ${JSON.stringify(key.slice(0, 80))} is not a plain name`)
  if (!isMap(node)) return refuse(`the assembly ${key} is a mapping of title, required and bricks`)
  let title: string | null = null
  let required = false
  let bricks: string[] | null = null
  let brickLines: number[] = []
  for (const pair of node.items) {
    const name = String((pair.key as { value?: unknown }).value)
    const at = ctx.lineAt(offsetOf(pair.key))
    const value = pair.value as Node | null
    if (!assemblyKeys.has(name))
      return refuse(`the assembly ${key} has no key ${name.slice(0, 80)} (title, required, bricks)`, at)
    if (name === 'title') {
      if (!isScalar(value) || typeof value.value !== 'string' || value.value.trim() === '' || value.value.length > 200)
        return refuse(`the assembly ${key}'s title must be text of 1 to 200 characters`, at)
      title = value.value
    } else if (name === 'required') {
      if (!isScalar(value) || typeof value.value !== 'boolean')
        return refuse(`the assembly ${key}'s required must be true or false`, at)
      required = value.value
    } else {
      if (!isSeq(value)) return refuse(`the assembly ${key}'s bricks must be a list of brick ids`, at)
      bricks = []
      brickLines = []
      for (const item of value.items) {
        if (!isScalar(item) || typeof item.value !== 'string')
          return refuse(`the assembly ${key}'s bricks must be brick ids`, ctx.lineAt(offsetOf(item)))
        bricks.push(item.value)
        brickLines.push(ctx.lineAt(offsetOf(item)))
      }
    }
  }
  if (title === null) return refuse(`the assembly ${key} needs a title`)
  if (bricks === null) return refuse(`the assembly ${key} needs bricks: a list of brick ids`)
  return { key, title, required, bricks, line, brickLines }
}

/**
 * `assemblies.unknown_brick` for each listed id no brick has, and, when the document declares assemblies,
 * `assemblies.orphan_brick` (a warning) for each brick in none of them: it installs unconditionally.
 */
export function checkAssemblies(
  assemblies: readonly AssemblyDecl[],
  bricks: readonly { id: string; line: number }[],
  report: (d: Diagnostic) => void,
): void {
  const ids = new Set(bricks.map((b) => b.id))
  const listed = new Set<string>()
  for (const assembly of assemblies) {
    assembly.bricks.forEach((id, i) => {
      listed.add(id)
      if (!ids.has(id))
        report(
          diagnostic(
            'assemblies.unknown_brick',
            `the assembly ${assembly.key} lists ${JSON.stringify(id.slice(0, 80))}, which no brick has as its id`,
            assembly.brickLines[i] ?? assembly.line,
          ),
        )
    })
  }
  if (assemblies.length === 0) return
  for (const brick of bricks) {
    if (!listed.has(brick.id))
      report(
        diagnostic(
          'assemblies.orphan_brick',
          `the brick ${brick.id} is in no assembly: it installs whatever is selected`,
          brick.line,
          brick.id,
        ),
      )
  }
}

/**
 * The assemblies an install takes: those selected (all when `selected` is omitted) and every required one
 * (rule 4: a required assembly cannot be deselected). Unknown keys are ignored. In declaration order.
 */
export function selectAssemblies(
  assemblies: readonly AssemblyDecl[],
  selected: readonly string[] | undefined,
): AssemblyDecl[] {
  if (selected === undefined) return [...assemblies]
  const wanted = new Set(selected)
  return assemblies.filter((a) => a.required || wanted.has(a.key))
}

/**
 * The brick ids an install takes: those of the selected assemblies and every brick in no assembly (an
 * orphan installs unconditionally; there is no brick-level skipping).
 */
export function selectedBrickIds(
  assemblies: readonly AssemblyDecl[],
  selected: readonly string[] | undefined,
  brickIds: readonly string[],
): Set<string> {
  const inSome = new Set(assemblies.flatMap((a) => a.bricks))
  const chosen = new Set(selectAssemblies(assemblies, selected).flatMap((a) => a.bricks))
  return new Set(brickIds.filter((id) => chosen.has(id) || !inSome.has(id)))
}
