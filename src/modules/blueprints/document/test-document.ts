/**
 * Blueprint documents for tests: a valid envelope (namespace parameter `prefix`) and bricks written as
 * fences, so each test states only what it is about. Lines are found by content (`lineOf`), never counted
 * by hand.
 */

export interface EnvelopeOptions {
  /** Replaces the params block (YAML lines under `params:`). */
  params?: string
  /** YAML lines added at the end of the front matter. */
  extra?: string
}

export const namespaceParam = '  - name: prefix\n    type: identifier\n    namespace: true\n    default: desk\n'

/** A front matter that validates. */
export function envelope(options: EnvelopeOptions = {}): string {
  return [
    '---',
    'format: service-blueprint-v1',
    'id: help-desk',
    'name: Help desk',
    'version: 1.0.0',
    `params:\n${options.params ?? namespaceParam}`.trimEnd(),
    ...(options.extra ? [options.extra.trimEnd()] : []),
    '---',
    '',
  ].join('\n')
}

/** One fence: the info string after `service:`, and the body (JSON-encoded unless given as text). */
export function brick(info: string, body: unknown): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body, null, 2)
  return `\`\`\`service:${info}\n${text}\n\`\`\`\n`
}

/** A document: envelope, a line of prose, and the bricks separated by blank lines. */
export function documentOf(bricks: readonly string[], options: EnvelopeOptions = {}): string {
  return `${envelope(options)}\n# An app\n\nSome prose.\n\n${bricks.join('\n')}`
}

/** The 1-based line of the first line of `text` containing `needle` (the n-th with `nth`). */
export function lineOf(text: string, needle: string, nth = 1): number {
  let seen = 0
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) if (lines[i]!.includes(needle) && ++seen === nth) return i + 1
  throw new Error(`no line holds ${needle}`)
}

/** A collection brick that validates. */
export const ticketsCollection = brick('collection id=tickets', {
  name: '${params.prefix}_tickets',
  fields: [{ name: 'title', type: 'text', required: true }],
  accessPreset: 'private',
})
