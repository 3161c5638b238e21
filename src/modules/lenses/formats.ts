import { parseSectionTemplate, renderSectionTemplate, type SectionTemplate } from '../../lib/template/sections.js'

/** The output formats of a lens and what each is served as. */
export const lensFormats = ['html', 'csv', 'md'] as const
export type LensFormat = (typeof lensFormats)[number]

export const contentTypes: Readonly<Record<LensFormat, string>> = {
  html: 'text/html; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
}

export const extensions: Readonly<Record<LensFormat, string>> = { html: 'html', csv: 'csv', md: 'md' }

/** Longest rendered output (characters). */
export const maxOutputLength = 5_000_000

/** A value as text: strings as they are, numbers and booleans as JSON writes them, lists and objects as JSON, null and missing as nothing. */
export function textOf(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  try {
    return JSON.stringify(value) ?? ''
  } catch {
    return ''
  }
}

const htmlEntities: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
  '=': '&#61;',
}

/** Text safe in HTML element content and in quoted or unquoted attribute values. */
export function escapeHtml(value: unknown): string {
  return textOf(value).replace(/[&<>"'`=]/g, (c) => htmlEntities[c]!)
}

/**
 * Text that a Markdown renderer shows as written: HTML's special characters as entities (Markdown passes
 * raw HTML through), Markdown's punctuation backslash-escaped, line breaks as spaces (a table row is one line).
 */
export function escapeMarkdown(value: unknown): string {
  return textOf(value)
    .replace(/\r\n?|\n/g, ' ')
    .replace(/[&<>"]/g, (c) => htmlEntities[c]!)
    .replace(/[\\`*_{}[\]()#+\-!|~]/g, (c) => `\\${c}`)
}

/**
 * One CSV field (RFC 4180): quoted when it holds a quote, comma, CR or LF, quotes doubled. Text that a
 * spreadsheet would take for a formula (a leading =, +, -, @, tab, CR or NUL) gets a leading apostrophe
 * (OWASP's CSV injection advice, ASVS 5 1.2.10); numbers are written as numbers, so -5 stays -5.
 */
export function csvField(value: unknown): string {
  let text = textOf(value)
  if (typeof value === 'string' && /^[=+\-@\t\r\0]/.test(text)) text = `'${text}`
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** A header row of the column names, then one row per record, CRLF line ends. */
export function renderCsv(columns: readonly string[], rows: readonly Record<string, unknown>[]): string {
  const lines = [columns.map(csvField).join(',')]
  for (const row of rows) lines.push(columns.map((c) => csvField(row[c])).join(','))
  return `${lines.join('\r\n')}\r\n`
}

const defaultHtml = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{{lens.name}}</title></head>
<body>
<h1>{{lens.name}}</h1>
<table>
<thead><tr>{{#columns}}<th>{{name}}</th>{{/columns}}</tr></thead>
<tbody>
{{#table}}<tr>{{#cells}}<td>{{.}}</td>{{/cells}}</tr>
{{/table}}</tbody>
</table>
{{^table}}<p>No records.</p>{{/table}}
</body>
</html>
`

const defaultMd = `# {{lens.name}}

|{{#columns}} {{name}} |{{/columns}}
|{{#columns}} --- |{{/columns}}
{{#table}}|{{#cells}} {{.}} |{{/cells}}
{{/table}}{{^table}}
No records.
{{/table}}`

function parsedDefault(text: string): SectionTemplate {
  const parsed = parseSectionTemplate(text)
  if (!parsed.ok) throw new Error(`default lens template: ${parsed.error.message}`)
  return parsed.template
}

/** The templates used when a lens brings none: a table of its columns. */
export const defaultTemplates: Readonly<Record<'html' | 'md', SectionTemplate>> = {
  html: parsedDefault(defaultHtml),
  md: parsedDefault(defaultMd),
}

/** What a lens's html and md templates read: its name, the parameters, the columns, the records (by field, and as cells in column order). */
export interface RenderData {
  readonly lens: {
    readonly id: string
    readonly name: string
    readonly description: string
    readonly version: number | null
  }
  readonly params: Readonly<Record<string, unknown>>
  readonly columns: readonly { readonly name: string }[]
  readonly rows: readonly Record<string, unknown>[]
  readonly table: readonly { readonly cells: readonly unknown[] }[]
  readonly count: number
  readonly hasMore: boolean
}

/** Renders one format. Throws SectionRenderLimit past maxOutputLength. */
export function renderFormat(format: LensFormat, template: SectionTemplate | null, data: RenderData): string {
  if (format === 'csv')
    return renderCsv(
      data.columns.map((c) => c.name),
      data.rows,
    )
  const escape = format === 'html' ? escapeHtml : escapeMarkdown
  return renderSectionTemplate(template ?? defaultTemplates[format], data, { escape, maxLength: maxOutputLength })
}
