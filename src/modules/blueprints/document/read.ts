import { brickKindNames, brickKindOf, type BrickKind, type StaticCheckContext } from '../kinds/index.js'
import type { StaticBlockedReason } from '../kinds/define.js'
import { checkAssemblies } from './assemblies.js'
import { readBrickBody } from './body.js'
import { forEachString, referencesIn } from './compile.js'
import { diagnostic, hasErrors, orderDiagnostics, type Diagnostic } from './diagnostics.js'
import { readEnvelope, type Envelope } from './envelope.js'
import { readFences, type BrickFence } from './fences.js'
import { dependencyCycles, unknownDependencies } from './graph.js'
import { readInfoString } from './info-string.js'
import type { ParamDecl } from './params.js'

/** A brick of the document that has an id (the first of a duplicated id only). */
export interface Brick {
  readonly id: string
  /** As written: a kind that does not exist is kept here (and reported). */
  readonly kind: string
  readonly needs: readonly string[]
  readonly title: string | null
  /** The line of its opening fence. */
  readonly line: number
  /** The parsed body, or null when the brick was refused before or while reading it. */
  readonly body: Readonly<Record<string, unknown>> | null
}

/** A reason the plan will block a brick for, known from its body alone. */
export interface StaticBlock {
  readonly brickId: string
  readonly reason: StaticBlockedReason
  readonly message: string
}

/** Everything validation learns of a document. */
export interface BlueprintReport {
  /** No diagnostic is an error. */
  readonly ok: boolean
  readonly diagnostics: readonly Diagnostic[]
  readonly envelope: Envelope | null
  readonly bricks: readonly Brick[]
  readonly blocked: readonly StaticBlock[]
}

/**
 * Reads and checks a blueprint document (§ Blueprint document): the envelope, every `service:` fence, the
 * needs graph, parameter references, the naming rule, each kind's static limits and the assemblies. Never
 * throws for any input; its work is linear in the document (front matter capped, JSON bounded).
 */
export function readBlueprint(source: string): BlueprintReport {
  const found: Diagnostic[] = []
  const report = (d: Diagnostic) => void found.push(d)
  const lines = normalise(source).split('\n')
  const { envelope, bodyFrom } = readEnvelope(lines, report)
  const bricks: Brick[] = []
  const blocked: StaticBlock[] = []
  if (bodyFrom !== null) {
    const seen = new Set<string>()
    for (const fence of readFences(lines, bodyFrom)) {
      const brick = readBrick(fence, envelope, seen, report, blocked)
      if (brick) {
        seen.add(brick.id)
        bricks.push(brick)
      }
    }
    checkGraph(bricks, report)
    if (envelope) checkAssemblies(envelope.assemblies, bricks, report)
  }
  return { ok: !hasErrors(found), diagnostics: orderDiagnostics(found), envelope, bricks, blocked }
}

/** Without a byte-order mark, with every line ending a \n (as the Markdown parser counts lines). */
function normalise(source: string): string {
  const text = source.charCodeAt(0) === 0xfeff ? source.slice(1) : source
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text
}

function readBrick(
  fence: BrickFence,
  envelope: Envelope | null,
  seen: ReadonlySet<string>,
  report: (d: Diagnostic) => void,
  blocked: StaticBlock[],
): Brick | null {
  const read = readInfoString(fence.info)
  if (!read.ok) {
    report(diagnostic('brick.invalid_info', `the fence's info string: ${read.problem}`, fence.line, read.id))
    // Its id still counts as taken, so that needs and assemblies naming it are not reported twice.
    if (read.id === null || seen.has(read.id)) return null
    return { id: read.id, kind: read.kind, needs: [], title: null, line: fence.line, body: null }
  }
  const { kind, id, needs, title } = read.info
  const kindDef = brickKindOf(kind)
  if (!kindDef) {
    const named = JSON.stringify(kind.slice(0, 40))
    report(
      diagnostic(
        'brick.unknown_kind',
        `${named} is not a brick kind; the fifteen kinds are ${brickKindNames.join(', ')}`,
        fence.line,
        id,
      ),
    )
  }
  if (id === null) {
    report(diagnostic('brick.missing_id', 'a brick fence names its id: service:<kind> id=<brickId>', fence.line))
  } else if (seen.has(id)) {
    report(diagnostic('brick.duplicate_id', `the brick id ${id} is used by an earlier brick`, fence.line, id))
    return null
  }
  if (!fence.terminated) {
    report(diagnostic('brick.unterminated', 'the brick fence never closes', fence.line, id))
  }
  const body = kindDef && fence.terminated ? checkBody(fence, kindDef, id, envelope, report, blocked) : null
  return id === null ? null : { id, kind, needs, title, line: fence.line, body }
}

/** The body's JSON, the parameters it names, the naming rule and the kind's own limits. */
function checkBody(
  fence: BrickFence,
  kind: BrickKind,
  brickId: string | null,
  envelope: Envelope | null,
  report: (d: Diagnostic) => void,
  blocked: StaticBlock[],
): Record<string, unknown> | null {
  const read = readBrickBody(fence.body)
  if (!read.ok) {
    report(diagnostic(read.code, read.message, fence.bodyLine + read.lineInBody, brickId))
    return null
  }
  const body = read.value
  const params: readonly ParamDecl[] = envelope?.params ?? []
  if (envelope?.params) checkReferences(body, envelope.params, fence.line, brickId, report)
  const namespace = params.find((p) => p.namespace)
  if (kind.namedBy && namespace) checkNaming(body, kind, namespace.name, fence.line, brickId, report)
  const ctx: StaticCheckContext = {
    brickId,
    line: fence.line,
    params,
    error: (code, message) => report(diagnostic(code, message, fence.line, brickId)),
    blocked: (reason, message) => {
      report(diagnostic(reason, `the plan will block this brick: ${message}`, fence.line, brickId))
      if (brickId !== null) blocked.push({ brickId, reason, message })
    },
  }
  kind.staticCheck?.(body, ctx)
  return body
}

/** Rule 3's references: each `${params.x}` must name a declared parameter (reported once per name and brick). */
function checkReferences(
  body: unknown,
  params: readonly ParamDecl[],
  line: number,
  brickId: string | null,
  report: (d: Diagnostic) => void,
): void {
  const declared = new Set(params.map((p) => p.name))
  const unknown = new Set<string>()
  forEachString(body, (text) => {
    for (const name of referencesIn(text)) if (!declared.has(name)) unknown.add(name)
  })
  for (const name of unknown) {
    report(
      diagnostic(
        'params.unknown_reference',
        `\${params.${name.slice(0, 80)}} names no declared parameter`,
        line,
        brickId,
      ),
    )
  }
}

/** Rule 1: what a brick creates embeds the namespace parameter in its name (a nav item in its label). */
function checkNaming(
  body: Readonly<Record<string, unknown>>,
  kind: BrickKind,
  namespace: string,
  line: number,
  brickId: string | null,
  report: (d: Diagnostic) => void,
): void {
  const field = kind.namedBy!
  const value = body[field]
  if (typeof value === 'string' && value.includes(`\${params.${namespace}}`)) return
  const what =
    kind.kind === 'nav'
      ? 'a nav item embeds the namespace in its label'
      : `${kind.label} embeds the namespace in its name`
  report(
    diagnostic(
      'naming.missing_namespace',
      `${what}: ${field} must contain \${params.${namespace}} (as in \${params.${namespace}}_jobs)`,
      line,
      brickId,
    ),
  )
}

/** Needs naming no brick, and cycles (each reported once, at its first brick in the document). */
function checkGraph(bricks: readonly Brick[], report: (d: Diagnostic) => void): void {
  const lineOf = new Map(bricks.map((b) => [b.id, b.line]))
  for (const { brickId, missing } of unknownDependencies(bricks)) {
    report(
      diagnostic(
        'brick.unknown_dependency',
        `needs names ${missing}, which no brick has as its id`,
        lineOf.get(brickId)!,
        brickId,
      ),
    )
  }
  for (const cycle of dependencyCycles(bricks)) {
    const first = cycle[0]!
    const among = cycle.length > 20 ? `${cycle.slice(0, 20).join(', ')} … (${cycle.length} bricks)` : cycle.join(', ')
    report(
      diagnostic(
        'brick.dependency_cycle',
        cycle.length === 1 ? `${first} needs itself` : `needs form a cycle among ${among}`,
        lineOf.get(first)!,
        first,
      ),
    )
  }
}
