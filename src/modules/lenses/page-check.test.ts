import { describe, expect, it } from 'vitest'
import { isAppError } from '../../lib/errors.js'
import { parseSectionTemplate } from '../../lib/template/sections.js'
import { checkPageTemplate } from './page-check.js'

function check(html: string): string | null {
  const parsed = parseSectionTemplate(html)
  if (!parsed.ok) throw new Error(parsed.error.message)
  try {
    checkPageTemplate(parsed.template)
    return null
  } catch (err) {
    return isAppError(err) ? err.code : 'thrown'
  }
}

describe('checkPageTemplate: no refresh and no base URL in any spelling the output could have', () => {
  it.each([
    '<meta http-equiv="refresh" content="0;url=https://x.example/">',
    '<META HTTP-EQUIV=refresh>',
    '<base href="https://x.example/">',
    '<BASE\nhref=x>',
    '<base/href=x>',
    '<meta http-{{! note }}equiv="refresh">',
    '<meta http-{{nothing}}equiv="refresh">',
    '<meta http{{#rows}}{{/rows}}-equiv="refresh">',
    '<meta {{^rows}}http-{{/rows}}equiv="refresh">',
    '<ba{{! x }}se href=x>',
    '<meta {{attr}}="refresh" content="0;url=https://x.example/">',
    '<meta name="x" content="{{lens.description}}">',
    '<{{tag}} {{attr}}="refresh">',
    '<me{{tag}} content="0">',
  ])('refuses %j', (html) => {
    expect(check(html)).toBe('validation_error')
  })

  it.each([
    '<meta charset="utf-8"><title>{{lens.name}}</title>',
    '{{! a comment }}<p title="{{title}}">{{title}}</p>',
    '{{#columns}}<{{name}}>{{/columns}}',
    '<p>http equiv, base, meta: words in text</p>',
    '<a href="{{link}}">{{title}}</a>',
  ])('accepts %j', (html) => {
    expect(check(html)).toBeNull()
  })
})
