import { AppError } from '../../lib/errors.js'
import {
  parseSectionTemplate,
  renderSectionTemplate,
  SectionRenderLimit,
  type SectionTemplate,
} from '../../lib/template/sections.js'
import { rendererLimits } from './schemas.js'

type Node = SectionTemplate['nodes'][number]

const htmlEntities: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
  '=': '&#61;',
}

/** A value as HTML text safe in element content and in quoted or unquoted attributes; lists and objects as JSON, null as nothing. */
export function escapeHtml(value: unknown): string {
  let text: string
  if (value === null || value === undefined) text = ''
  else if (typeof value === 'string') text = value
  else if (typeof value === 'number' || typeof value === 'boolean') text = String(value)
  else text = JSON.stringify(value) ?? ''
  return text.replace(/[&<>"'`=]/g, (c) => htmlEntities[c]!)
}

/**
 * Parses a renderer's template and checks the names it reads at the record's level (outside sections that
 * may step into a list item or an object, whose keys are not known when saved) against `known`.
 * Throws validation_error naming `template` (the tag and its offset in the message and details).
 */
export function checkRendererTemplate(text: string, known: (name: string) => boolean): SectionTemplate {
  const parsed = parseSectionTemplate(text)
  if (!parsed.ok)
    throw new AppError('validation_error', `template: ${parsed.error.message}`, {
      at: 'template',
      code: parsed.error.code,
      position: parsed.error.position,
    })
  const walk = (nodes: readonly Node[]) => {
    for (const node of nodes) {
      if (node.kind === 'text' || node.path === null) continue
      if (!known(node.path.root))
        throw new AppError(
          'validation_error',
          `template: ${node.source} reads "${node.path.root.slice(0, 100)}", which is not a field of the collection (at offset ${node.path.position})`,
          { at: 'template', code: 'unknown_field', field: node.path.root, position: node.path.position },
        )
      // An inverted section renders in the record's own frame; a plain one may enter an item.
      if (node.kind === 'section' && node.inverted) walk(node.children)
    }
  }
  walk(parsed.template.nodes)
  return parsed.template
}

/**
 * Renders one record's values (only those the caller may read: a hidden field is absent, so empty) into
 * the template, every value HTML-escaped, bounded in output and in work (decision 046). Throws
 * limit_exceeded.
 */
export function renderRecordHtml(template: SectionTemplate, record: Readonly<Record<string, unknown>>): string {
  try {
    return renderSectionTemplate(template, record, {
      escape: escapeHtml,
      maxLength: rendererLimits.maxOutput,
      maxSteps: rendererLimits.maxSteps,
    })
  } catch (err) {
    if (err instanceof SectionRenderLimit)
      throw new AppError(
        'limit_exceeded',
        err.what === 'steps'
          ? `Rendering would take more than ${err.limit} steps (sections nested over long lists)`
          : `The rendered HTML would be longer than ${err.limit} characters`,
        { limit: err.limit },
      )
    throw err
  }
}
