import { formFields, type FormField } from './describe.js'
import type { OperationCategory, OperationDefinition } from './types.js'

/**
 * docs/operations.md, generated from the registry: one section per operation with its config table (the
 * catalog's form fields) and an example. `npm run docs:operations` writes it; docs-page.test.ts fails
 * when the committed page is not what this renders.
 */

const categories: readonly { readonly id: OperationCategory; readonly title: string }[] = [
  { id: 'data', title: 'Data' },
  { id: 'logic', title: 'Logic' },
  { id: 'transform', title: 'Transform' },
  { id: 'ai', title: 'AI' },
  { id: 'files', title: 'Files' },
  { id: 'network', title: 'Network' },
  { id: 'script', title: 'Script' },
  { id: 'communication', title: 'Communication' },
  { id: 'system', title: 'System' },
]

/**
 * Examples of the operations registered before definitions carried their own (`example`); a definition's
 * own example wins.
 */
export const fallbackExamples: Readonly<Record<string, Record<string, unknown>>> = {
  condition: {
    rules: {
      _and: [
        { field: '$trigger.body.total', operator: 'gte', value: 100 },
        { field: '$trigger.body.country', operator: 'in', value: ['DE', 'FR'] },
      ],
    },
    then: [{ key: 'note', type: 'log', config: { message: 'Big order {{$trigger.body.id}}' } }],
  },
  stop: { status: 'error', message: 'Orders over the limit need approval' },
  throw_error: { message: 'Unknown customer {{$trigger.body.customer}}', statusCode: 422 },
  set_variable: { key: 'total', value: '{{$trigger.body.total}}' },
  math: { operation: 'formula', formula: '{{$steps.subtotal.result}} * 1.2', precision: 2 },
  log: { message: 'Order {{$trigger.body.id}} received', level: 'info' },
  delay: { ms: 2000 },
}

/** The example config shown for an operation: its own, a fallback above, or one built from its required fields. */
export function exampleOf(definition: OperationDefinition): {
  readonly config: Record<string, unknown>
  readonly derived: boolean
} {
  const own = definition.example ?? fallbackExamples[definition.type]
  if (own) return { config: { ...own }, derived: false }
  const config: Record<string, unknown> = {}
  for (const field of formFields(definition)) if (field.required) config[field.name] = placeholder(field)
  return { config, derived: true }
}

/** The page. */
export function renderOperationsPage(definitions: readonly OperationDefinition[]): string {
  const lines: string[] = [
    '# Operations reference',
    '',
    '<!-- Generated from the operations registry (src/modules/operations/catalog/) by `npm run docs:operations`.',
    '     Do not edit by hand: src/modules/operations/docs-page.test.ts fails when this page is stale. -->',
    '',
    'Every operation a flow step can run, with its configuration. How steps, templates, conditions and',
    'errors work is in [automation.md](automation.md) and the [operations catalog](operations-catalog.md);',
    '`GET /api/v1/automate/operations` answers the same form fields, and `GET /api/v1/automate/operations/:type`',
    'the full JSON Schema. String values may hold templates (`{{$trigger.body.total}}`), resolved before the',
    'config is checked; a number field also takes a string spelling a number.',
    '',
    'Effects: `none` and `reads` operations run in a dry run (`POST /flows/:id/test`); `writes` operations',
    'are recorded there as not run. Some say less for some configs (shown after the effects: a run_script',
    'without allowed_domains computes only, so a dry run runs it). `system_*` operations run in',
    'system-managed flows only and are refused when a user flow is saved.',
    '',
    '| Type | Name | Category | Effects |',
    '|---|---|---|---|',
  ]
  const ordered = categories.flatMap((c) => definitions.filter((d) => d.category === c.id))
  for (const d of ordered)
    lines.push(`| [${d.type}](#${d.type}) | ${cell(d.label)} | ${d.category} | ${effectsText(d)} |`)
  for (const category of categories) {
    const members = definitions.filter((d) => d.category === category.id)
    if (members.length === 0) continue
    lines.push('', `## ${category.title}`)
    for (const definition of members) lines.push('', ...section(definition))
  }
  return `${lines.join('\n')}\n`
}

function section(definition: OperationDefinition): string[] {
  const fields = formFields(definition)
  const { config, derived } = exampleOf(definition)
  const tags = [
    `category \`${definition.category}\``,
    `effects ${effectsText(definition, '`')}`,
    ...(definition.system ? ['system flows only'] : []),
  ]
  const lines = [
    `### ${definition.type}`,
    '',
    `**${definition.label}**: ${definition.description}`,
    '',
    `${tags.join(' · ')}`,
    '',
  ]
  if (fields.length === 0) lines.push('No configuration.')
  else {
    lines.push('| Field | Type | Required | Default | Bounds or values | Description |', '|---|---|---|---|---|---|')
    for (const field of fields) {
      lines.push(
        `| \`${field.name}\` | ${field.type} | ${field.required ? 'yes' : 'no'} | ${field.default === undefined ? '' : code(field.default)} | ${bounds(field)} | ${cell(field.description ?? '')} |`,
      )
    }
  }
  const step = { key: definition.type, type: definition.type, config }
  lines.push(
    '',
    derived ? 'Example (its required fields only):' : 'Example:',
    '',
    '```json',
    JSON.stringify(step, null, 2),
    '```',
  )
  return lines
}

/** `writes`, or `writes; reads when …` for an operation whose config may make it do less. */
function effectsText(definition: OperationDefinition, quote = ''): string {
  const effects = `${quote}${definition.effects}${quote}`
  return definition.effectsNote ? `${effects}; ${definition.effectsNote}` : effects
}

function bounds(field: FormField): string {
  if (field.options) return field.options.map(code).join(', ')
  if (field.min === undefined && field.max === undefined) return ''
  const range = `${field.min ?? 0}-${field.max ?? '∞'}`
  if (field.type === 'string') return `${range} characters`
  if (field.type === 'array') return `${range} items`
  return range
}

function placeholder(field: FormField): unknown {
  if (field.options && field.options.length > 0) return field.options[0]
  switch (field.type) {
    case 'string':
      return `<${field.name}>`
    case 'integer':
    case 'number':
      return field.min ?? 1
    case 'boolean':
      return false
    case 'array':
      return []
    case 'object':
      return {}
    default:
      return `<${field.name}>`
  }
}

function code(value: unknown): string {
  return `\`${cell(JSON.stringify(value))}\``
}

/** A table cell: pipes escaped, one line. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ')
}
