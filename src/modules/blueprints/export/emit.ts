import { blueprintFormat } from '../document/envelope.js'
import type { BrickKindName } from '../kinds/index.js'
import { emitOrder, type ExportBrick } from './bricks.js'
import { namespaceParam } from './namespace.js'

/** The envelope of an exported document. */
export interface ExportEnvelope {
  id: string
  name: string
  version: string
  namespace: string
}

const headings: Record<BrickKindName, string> = {
  collection: 'Collections',
  access: 'Access',
  role: 'Roles',
  grants: 'Grants',
  records: 'Seed records',
  container: 'File containers',
  'search-index': 'Search indexes',
  script: 'Scripts',
  lens: 'Lenses',
  attachment: 'Lens attachments',
  renderer: 'Renderers',
  view: 'Views',
  webhook: 'Webhooks',
  flow: 'Flows',
  nav: 'Navigation',
}

/**
 * The `service-blueprint-v1` document of an export: the envelope (the namespace parameter, then each
 * secret parameter, without a default), a short prose header, and the bricks under one heading per kind.
 * Scalars of the envelope are written as JSON strings (YAML reads them as strings: a namespace `null` or
 * `true` stays text). The same project gives the same text: nothing in it depends on the time.
 */
export function emitDocument(envelope: ExportEnvelope, bricks: readonly ExportBrick[], secrets: readonly string[]) {
  const q = (text: string) => JSON.stringify(text)
  const lines = [
    '---',
    `format: ${blueprintFormat}`,
    `id: ${envelope.id}`,
    `name: ${q(envelope.name)}`,
    `version: ${q(envelope.version)}`,
    'params:',
    `  - name: ${namespaceParam}`,
    '    type: identifier',
    '    namespace: true',
    `    default: ${q(envelope.namespace)}`,
    ...secrets.flatMap((name) => [`  - name: ${name}`, '    type: secret']),
    '---',
    '',
    `# ${envelope.name.replace(/\s+/g, ' ')}`,
    '',
    `Exported from a Plinth project (GET /api/v1/blueprints/export). Every name the app creates embeds the`,
    `namespace parameter \`${namespaceParam}\` (exported from \`${envelope.namespace}\`): install it with another value for a`,
    'second copy beside this one.',
  ]
  if (secrets.length > 0)
    lines.push(
      '',
      'Credentials are never exported: these secret parameters stand for them, given when the blueprint is installed.',
      '',
      ...secrets.map((name) => `- \`${name}\``),
    )
  for (const kind of emitOrder) {
    const ofKind = bricks.filter((b) => b.kind === kind)
    if (ofKind.length === 0) continue
    lines.push('', `## ${headings[kind]}`)
    for (const brick of ofKind) lines.push('', ...fence(brick))
  }
  return `${lines.join('\n')}\n`
}

/** One brick as a fence: longer than any run of backticks in its body, so no value can close it. */
function fence(brick: ExportBrick): string[] {
  const body = JSON.stringify(brick.body, null, 2)
  const longest = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length))
  const marks = '`'.repeat(Math.max(3, longest + 1))
  const needs = brick.needs.length > 0 ? ` needs=${brick.needs.join(',')}` : ''
  return [`${marks}service:${brick.kind} id=${brick.id}${needs}`, body, marks]
}
