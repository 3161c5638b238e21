import { AppError } from '../../lib/errors.js'
import type { SectionTemplate } from '../../lib/template/sections.js'

type TemplateNode = SectionTemplate['nodes'][number]

/** Where a value tag stands in the page text checked: a value writes letters, so it may complete a word. */
const slot = '\u0000'

/**
 * The page as the check reads it: the literal text in order, comments and section tags gone (they write
 * nothing of their own), each value tag a slot. Both branches of every section are kept, so text split
 * across them is still read as one.
 */
function pageText(nodes: readonly TemplateNode[]): string {
  let out = ''
  for (const node of nodes) {
    if (node.kind === 'text') out += node.text
    else if (node.kind === 'value') out += slot
    else out += pageText(node.children)
  }
  return out
}

/**
 * The page policy (routes.ts) stops scripts and loads, but a refresh or a base URL would still navigate
 * the viewer away, so a page template may not hold `<meta http-equiv>` or `<base>` in any spelling its
 * output could have: split by a comment, a section or a value that writes nothing, a value as (part of) the
 * name of a tag that has attributes (it could write `meta`), or a value anywhere inside a `<meta>` tag (it
 * could be the attribute's name). Throws validation_error at template.html.
 */
export function checkPageTemplate(template: SectionTemplate): void {
  const text = pageText(template.nodes)
  const joined = text.replaceAll(slot, '')
  const why = /http-equiv|<base[\s/>]/i.test(joined)
    ? '<meta http-equiv> and <base> are not allowed in a lens page'
    : new RegExp(`<\\/?[^\\s/>]*${slot}[^>]*[=${slot}]`).test(text)
      ? 'a value may not be (part of) the name of a tag with attributes'
      : new RegExp(`<meta\\b[^>]*${slot}`, 'i').test(text)
        ? 'a value may not be written inside a <meta> tag'
        : null
  if (why) throw new AppError('validation_error', `template.html: ${why}`, { at: 'template.html' })
}
