import { isMap, isScalar, type Node } from 'yaml'
import { readAssemblies, type AssemblyDecl } from './assemblies.js'
import { diagnostic, type Diagnostic } from './diagnostics.js'
import { readParams, type EnvelopeReadContext, type ParamDecl } from './params.js'
import { parseSemver } from './semver.js'
import { offsetOf, readYaml } from './yaml-read.js'

/** The one format this server reads. */
export const blueprintFormat = 'service-blueprint-v1'

/**
 * Older format ids, refused by name and not read (decision 068 names them): two notebook formats and the
 * v2 blueprint. Migrating means rewriting the first line (and, for the notebooks, their own keys).
 */
export const olderFormats: Readonly<Record<string, string>> = {
  'service-notebook-v1': 'a notebook document (the first notebook format)',
  'service-notebook-v2': 'a notebook document (the second notebook format)',
  'service-blueprint-v2': 'a v2 blueprint, a format this server does not read',
}

/** The largest front matter read, in bytes (decision 068): YAML costs far more per byte than Markdown. */
export const maxEnvelopeBytes = 65_536

/** Blueprint ids (§ Blueprint document): 3 to 41 characters. */
export const blueprintId = /^[a-z][a-z0-9-]{2,40}$/

const envelopeKeys = new Set(['format', 'id', 'name', 'version', 'params', 'assemblies'])
const removedKeys = new Set(['publisher', 'requires'])

/** The envelope as far as it could be read; a field that was missing or refused is null. */
export interface Envelope {
  readonly id: string | null
  readonly name: string | null
  readonly version: string | null
  /** Null when the front matter could not be read at all (then references to parameters are not checked). */
  readonly params: readonly ParamDecl[] | null
  readonly assemblies: readonly AssemblyDecl[]
}

export interface EnvelopeRead {
  readonly envelope: Envelope | null
  /** The 0-based index of the first line after the front matter, or null when the bricks are not to be read. */
  readonly bodyFrom: number | null
}

/**
 * Reads the front matter of a document split into lines: `---`, YAML, `---`. Without front matter the
 * document is all body (`envelope.missing`); one that never closes leaves no body to read
 * (`envelope.unterminated`); another format's document is refused and not read at all.
 */
export function readEnvelope(lines: readonly string[], report: (d: Diagnostic) => void): EnvelopeRead {
  if (lines[0]?.trimEnd() !== '---') {
    report(diagnostic('envelope.missing', 'a blueprint starts with front matter: a line ---, the envelope, and ---', 1))
    return { envelope: null, bodyFrom: 0 }
  }
  let close = -1
  let bytes = 0
  for (let i = 1; i < lines.length; i++) {
    if (lines[i]!.trimEnd() === '---') {
      close = i
      break
    }
    bytes += Buffer.byteLength(lines[i]!) + 1
  }
  if (close < 0) {
    report(diagnostic('envelope.unterminated', 'the front matter opened on line 1 never closes with ---', 1))
    return { envelope: null, bodyFrom: null }
  }
  if (bytes > maxEnvelopeBytes) {
    report(diagnostic('envelope.too_large', `the front matter is over ${maxEnvelopeBytes} bytes`, 1))
    return { envelope: null, bodyFrom: close + 1 }
  }
  const text = lines.slice(1, close).join('\n')
  const lineAt = lineIndex(text, 2)
  const read = readYaml(text)
  if (!read.ok) {
    for (const problem of read.problems) {
      const code = problem.kind === 'unsupported' ? 'envelope.unsupported_syntax' : 'envelope.invalid_yaml'
      const message =
        problem.kind === 'unsupported'
          ? `YAML anchors, aliases and merge keys are not supported: ${problem.message}`
          : `the front matter is not valid YAML: ${problem.message.split('\n')[0]}`
      report(diagnostic(code, message, lineAt(problem.offset)))
    }
    return { envelope: null, bodyFrom: close + 1 }
  }
  if (!isMap(read.root)) {
    report(diagnostic('envelope.invalid_yaml', 'the front matter must be a mapping of envelope keys', 2))
    return { envelope: null, bodyFrom: close + 1 }
  }
  const envelope = readKeys(read.root, { lineAt, report })
  return { envelope, bodyFrom: envelope ? close + 1 : null }
}

/** The envelope keys; null when the format is refused (the rest is then not read). */
function readKeys(
  root: Node & { items: { key: unknown; value: unknown }[] },
  ctx: EnvelopeReadContext,
): Envelope | null {
  const pairs = root.items.map((pair) => ({
    key: String((pair.key as { value?: unknown }).value),
    value: pair.value as Node | null,
    line: ctx.lineAt(offsetOf(pair.key)),
  }))
  if (!formatAccepted(pairs, ctx)) return null
  let id: string | null = null
  let name: string | null = null
  let version: string | null = null
  let params: ParamDecl[] | null = null
  let assemblies: AssemblyDecl[] = []
  for (const { key, value, line } of pairs) {
    const scalar = isScalar(value) ? value.value : undefined
    if (key === 'id') {
      if (typeof scalar === 'string' && blueprintId.test(scalar)) id = scalar
      else ctx.report(diagnostic('envelope.invalid_id', `id must match ${blueprintId.source}`, line))
    } else if (key === 'name') {
      if (typeof scalar === 'string' && scalar.trim() !== '' && scalar.length <= 200) name = scalar
      else ctx.report(diagnostic('envelope.invalid_name', 'name must be text of 1 to 200 characters', line))
    } else if (key === 'version') {
      if (typeof scalar === 'string' && parseSemver(scalar)) version = scalar
      else ctx.report(diagnostic('envelope.invalid_version', 'version must be a semantic version (1.0.0)', line))
    } else if (key === 'params') {
      params = readParams(value, line, ctx)
    } else if (key === 'assemblies') {
      assemblies = readAssemblies(value, ctx)
    } else if (removedKeys.has(key)) {
      ctx.report(diagnostic('envelope.removed_key', `${key} is no longer part of the envelope and is ignored`, line))
    } else if (key !== 'format') {
      ctx.report(
        diagnostic(
          'envelope.unknown_key',
          `${key.slice(0, 80)} is not an envelope key (${[...envelopeKeys].join(', ')})`,
          line,
        ),
      )
    }
  }
  const present = new Set(pairs.map((p) => p.key))
  if (!present.has('id')) ctx.report(diagnostic('envelope.invalid_id', 'the envelope has no id', 2))
  if (!present.has('name')) ctx.report(diagnostic('envelope.invalid_name', 'the envelope has no name', 2))
  if (!present.has('version')) ctx.report(diagnostic('envelope.invalid_version', 'the envelope has no version', 2))
  if (!present.has('params')) params = readParams(undefined, null, ctx)
  return { id, name, version, params, assemblies }
}

/** The first line of the front matter declares the format, exactly service-blueprint-v1. */
function formatAccepted(
  pairs: readonly { key: string; value: Node | null; line: number }[],
  ctx: EnvelopeReadContext,
): boolean {
  const at = pairs.findIndex((p) => p.key === 'format')
  const pair = pairs[at]
  if (!pair) {
    ctx.report(diagnostic('envelope.unsupported_format', `the envelope declares no format (${blueprintFormat})`, 2))
    return false
  }
  const value = isScalar(pair.value) ? pair.value.value : null
  if (value !== blueprintFormat) {
    const written = typeof value === 'string' ? value.slice(0, 80) : String(value)
    const older = typeof value === 'string' ? olderFormats[value] : undefined
    const message = older
      ? `format ${written} is ${older}; it is not read: rewrite the first line as format: ${blueprintFormat}`
      : `format ${JSON.stringify(written)} is not supported: this server reads ${blueprintFormat}`
    ctx.report(diagnostic('envelope.unsupported_format', message, pair.line))
    return false
  }
  if (at !== 0) {
    ctx.report(
      diagnostic('envelope.unsupported_format', 'format must be the first line of the front matter', pair.line),
    )
    return false
  }
  return true
}

/** Document line numbers for offsets into `text`, whose first line is document line `firstLine`. */
export function lineIndex(text: string, firstLine: number): (offset: number) => number {
  const starts = [0]
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1)
  return (offset) => {
    let lo = 0
    let hi = starts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (starts[mid]! <= offset) lo = mid
      else hi = mid - 1
    }
    return firstLine + lo
  }
}
