import { describe, expect, it } from 'vitest'
import { parseSectionTemplate, renderSectionTemplate, SectionRenderLimit, sectionPaths } from './sections.js'

const escape = (value: unknown) => (value === null || value === undefined ? '' : String(value).replaceAll('<', '&lt;'))
function render(text: string, data: unknown, maxLength?: number): string {
  const parsed = parseSectionTemplate(text)
  if (!parsed.ok) throw new Error(parsed.error.message)
  return renderSectionTemplate(parsed.template, data, { escape, maxLength })
}
const errorOf = (text: string) => {
  const parsed = parseSectionTemplate(text)
  return parsed.ok ? null : parsed.error.code
}

describe('section templates: rendering', () => {
  it.each([
    ['Hi {{name}}', { name: '<b>' }, 'Hi &lt;b>'],
    ['{{ a.b[1] }}', { a: { b: [1, 2] } }, '2'],
    ['{{#rows}}[{{t}}]{{/rows}}', { rows: [{ t: 1 }, { t: 2 }] }, '[1][2]'],
    ['{{#rows}}{{.}},{{/rows}}', { rows: ['x', 'y'] }, 'x,y,'],
    ['{{#rows}}x{{/rows}}{{^rows}}none{{/rows}}', { rows: [] }, 'none'],
    ['{{#flag}}on{{/flag}}{{^flag}}off{{/flag}}', { flag: false }, 'off'],
    ['{{#obj}}{{k}}{{/obj}}', { obj: { k: 'v' } }, 'v'],
    // A name missing in the item is looked up outwards.
    ['{{#rows}}{{t}}{{title}};{{/rows}}', { title: 'T', rows: [{ t: 1 }, { t: 2, title: 'own' }] }, '1T;2own;'],
    ['{{missing}}|{{a.missing}}', { a: {} }, '|'],
    ['{{! a comment }}x', {}, 'x'],
    ['\\{{literal}}', {}, '{{literal}}'],
    // Inherited names are never reached.
    ['{{toString}}{{#rows}}{{length}}{{/rows}}', { rows: [[1]] }, ''],
  ])('%s', (text, data, expected) => {
    expect(render(text, data)).toBe(expected)
  })

  it('stops at the output bound', () => {
    expect(() => render('{{#rows}}xxxxxxxxxx{{/rows}}', { rows: Array.from({ length: 20 }, () => 1) }, 100)).toThrow(
      SectionRenderLimit,
    )
  })

  it('lists the paths it reads', () => {
    const parsed = parseSectionTemplate('{{#rows}}{{title}}{{.}}{{/rows}}{{params.q}}')
    expect(parsed.ok && sectionPaths(parsed.template).map((p) => p.root)).toEqual(['rows', 'title', 'params'])
  })
})

describe('section templates: refused when parsed', () => {
  it.each([
    ['{{{raw}}}', 'unsupported_tag'],
    ['{{& raw}}', 'unsupported_tag'],
    ['{{> partial}}', 'unsupported_tag'],
    ['{{=<% %>=}}', 'unsupported_tag'],
    ['{{= 1 + 1 }}', 'unsupported_tag'],
    ['{{a', 'unclosed_tag'],
    ['{{}}', 'empty_tag'],
    ['{{#}}x{{/}}', 'empty_tag'],
    ['{{#a}}x', 'unclosed_section'],
    ['{{/a}}', 'unexpected_close'],
    ['{{#a}}{{/b}}', 'unexpected_close'],
    ['{{a b}}', 'invalid_path'],
    ['{{__proto__}}', 'forbidden_key'],
    ['{{a.constructor}}', 'forbidden_key'],
    ['{{#a}}'.repeat(21) + '{{/a}}'.repeat(21), 'too_deep'],
  ])('%s → %s', (text, code) => {
    expect(errorOf(text)).toBe(code)
  })
})

describe('section templates: bounded work', () => {
  const rows = Array.from({ length: 1000 }, (_, i) => ({ i }))
  const parsed = (text: string) => {
    const result = parseSectionTemplate(text)
    if (!result.ok) throw new Error(result.error.message)
    return result.template
  }
  it('sections nested over a long list stop at maxSteps, even when they write nothing', () => {
    // 20 levels over 1,000 rows: 1,000^20 passes, none writing a character (a missing name is empty).
    const nested = parsed(`${'{{#rows}}'.repeat(20)}{{missing}}${'{{/rows}}'.repeat(20)}`)
    expect(() => renderSectionTemplate(nested, { rows }, { escape: String })).toThrow(
      expect.objectContaining({ name: 'SectionRenderLimit', what: 'steps', limit: 2_000_000 }),
    )
  })
  it('a long but linear render passes', () => {
    const table = parsed('{{#rows}}<tr><td>{{i}}</td></tr>{{/rows}}')
    expect(renderSectionTemplate(table, { rows }, { escape: (v) => (v === null ? '' : String(v)) })).toContain(
      '<td>999</td>',
    )
  })
})
