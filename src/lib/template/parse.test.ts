import { describe, expect, it } from 'vitest'
import type { TemplatePart, TemplateSyntaxError } from './ast.js'
import { checkTemplate } from './deep.js'
import { parseTemplate } from './parse.js'

const text = (t: string) => ({ kind: 'text', text: t })
const path = (source: string, position: number, root: string, ...segments: (string | number)[]) => ({
  kind: 'path',
  source,
  position,
  root,
  segments: segments.map((s) => (typeof s === 'number' ? { kind: 'index', index: s } : { kind: 'key', key: s })),
})

const valid: { name: string; template: string; parts: unknown[]; whole: boolean }[] = [
  { name: 'plain text', template: 'hello', parts: [text('hello')], whole: false },
  { name: 'empty string', template: '', parts: [], whole: false },
  {
    name: 'one tag, nothing else: whole',
    template: '{{$trigger.body}}',
    parts: [path('{{$trigger.body}}', 0, '$trigger', 'body')],
    whole: true,
  },
  {
    name: 'spaces and newlines inside the braces',
    template: '{{ \n $user.id\t }}',
    parts: [path('{{ \n $user.id\t }}', 0, '$user', 'id')],
    whole: true,
  },
  {
    name: 'a space outside the tag makes it in-string',
    template: ' {{a}}',
    parts: [text(' '), path('{{a}}', 1, 'a')],
    whole: false,
  },
  {
    name: 'text around tags',
    template: 'Hi {{a.b}}, {{c}}!',
    parts: [text('Hi '), path('{{a.b}}', 3, 'a', 'b'), text(', '), path('{{c}}', 12, 'c'), text('!')],
    whole: false,
  },
  { name: 'bracket index', template: '{{a.b[0].c}}', parts: [path('{{a.b[0].c}}', 0, 'a', 'b', 0, 'c')], whole: true },
  {
    name: 'dot index is a key (it reads arrays too)',
    template: '{{a.b.0.c}}',
    parts: [path('{{a.b.0.c}}', 0, 'a', 'b', '0', 'c')],
    whole: true,
  },
  { name: 'indexes in a row', template: '{{m[1][22]}}', parts: [path('{{m[1][22]}}', 0, 'm', 1, 22)], whole: true },
  {
    name: 'quoted keys',
    template: `{{a["b c"]['d.e']}}`,
    parts: [path(`{{a["b c"]['d.e']}}`, 0, 'a', 'b c', 'd.e')],
    whole: true,
  },
  {
    name: 'a quoted key may hold }}',
    template: '{{a["}}"]}}',
    parts: [path('{{a["}}"]}}', 0, 'a', '}}')],
    whole: true,
  },
  {
    name: 'hyphens, $ and other scripts in names',
    template: '{{$steps.send-mail.prénom}}',
    parts: [path('{{$steps.send-mail.prénom}}', 0, '$steps', 'send-mail', 'prénom')],
    whole: true,
  },
  {
    name: 'send_email style key',
    template: 'Dear {{name}}',
    parts: [text('Dear '), path('{{name}}', 5, 'name')],
    whole: false,
  },
  { name: 'escaped opening is literal', template: '\\{{a}}', parts: [text('{{a}}')], whole: false },
  {
    name: 'escape next to a real tag',
    template: '\\{{x}} {{y}}',
    parts: [text('{{x}} '), path('{{y}}', 7, 'y')],
    whole: false,
  },
  {
    name: 'other backslashes stay',
    template: 'a\\b \\} {{y}}',
    parts: [text('a\\b \\} '), path('{{y}}', 7, 'y')],
    whole: false,
  },
  {
    name: 'a stray }} is text (JSON in a body)',
    template: '{"a":{"b":1}}',
    parts: [text('{"a":{"b":1}}')],
    whole: false,
  },
  {
    name: 'a tag inside JSON text',
    template: '{"a":{"b":{{x}}}}',
    parts: [text('{"a":{"b":'), path('{{x}}', 10, 'x'), text('}}')],
    whole: false,
  },
  { name: 'single braces are text', template: '{a} }', parts: [text('{a} }')], whole: false },
  {
    name: 'expression',
    template: '{{= $sum($steps.a.values) }}',
    parts: [{ kind: 'expression', source: '{{= $sum($steps.a.values) }}', position: 0, code: '$sum($steps.a.values)' }],
    whole: true,
  },
  {
    name: 'expression with nested braces and strings',
    template: 'x{{= {"a": {"b": "}}"}} }}',
    parts: [
      text('x'),
      { kind: 'expression', source: '{{= {"a": {"b": "}}"}} }}', position: 1, code: '{"a": {"b": "}}"}}' },
    ],
    whole: false,
  },
  {
    name: 'expression with an escaped quote',
    template: "{{= 'it\\'s }}' }}",
    parts: [{ kind: 'expression', source: "{{= 'it\\'s }}' }}", position: 0, code: "'it\\'s }}'" }],
    whole: true,
  },
]

describe('parseTemplate: valid templates', () => {
  it.each(valid)('$name', ({ template, parts, whole }) => {
    const parsed = parseTemplate(template)
    if (!parsed.ok) throw new Error(parsed.error.message)
    expect(parsed.template.parts).toEqual(parts)
    expect(parsed.template.whole !== null).toBe(whole)
    expect(Object.isFrozen(parsed.template) && Object.isFrozen(parsed.template.parts)).toBe(true)
    parsed.template.parts.forEach((part: TemplatePart) => expect(Object.isFrozen(part)).toBe(true))
  })
})

const invalid: { name: string; template: string; code: TemplateSyntaxError['code']; position: number }[] = [
  { name: 'unclosed tag', template: 'Hi {{ name', code: 'unclosed_tag', position: 3 },
  { name: 'unclosed after a complete tag', template: '{{a}} {{b', code: 'unclosed_tag', position: 6 },
  { name: 'one closing brace only', template: '{{a}', code: 'unclosed_tag', position: 0 },
  { name: 'empty tag', template: 'x {{}}', code: 'empty_tag', position: 2 },
  { name: 'blank tag', template: '{{   }}', code: 'empty_tag', position: 0 },
  { name: 'empty expression', template: '{{= }}', code: 'empty_expression', position: 0 },
  { name: 'unclosed expression', template: '{{= {"a": 1 }}', code: 'unclosed_tag', position: 0 },
  { name: 'expression with an unterminated string', template: '{{= "abc }}', code: 'unclosed_tag', position: 0 },
  { name: 'space inside a path', template: '{{ a b }}', code: 'invalid_path', position: 5 },
  { name: 'space around a dot', template: '{{ a . b }}', code: 'invalid_path', position: 5 },
  { name: 'path starting with a dot', template: '{{.a}}', code: 'invalid_path', position: 2 },
  { name: 'trailing dot', template: '{{a.}}', code: 'invalid_path', position: 4 },
  { name: 'double dot', template: '{{a..b}}', code: 'invalid_path', position: 4 },
  { name: 'path starting with [', template: '{{[0]}}', code: 'invalid_path', position: 2 },
  { name: 'negative index', template: '{{a[-1]}}', code: 'invalid_path', position: 4 },
  { name: 'leading zero', template: '{{a[01]}}', code: 'invalid_path', position: 4 },
  { name: 'empty index', template: '{{a[]}}', code: 'invalid_path', position: 4 },
  { name: 'unclosed bracket', template: '{{a[0}}', code: 'invalid_path', position: 4 },
  { name: 'unterminated quoted key', template: '{{a["b}}', code: 'invalid_path', position: 3 },
  { name: 'a call is not a path', template: '{{a.b()}}', code: 'invalid_path', position: 5 },
  { name: 'an operator is not a path', template: '{{a + 1}}', code: 'invalid_path', position: 4 },
  { name: 'nested open', template: '{{ a {{ b }}', code: 'invalid_path', position: 5 },
  { name: 'triple braces', template: '{{{a}}}', code: 'invalid_path', position: 2 },
  { name: '__proto__', template: '{{a.__proto__.x}}', code: 'forbidden_key', position: 4 },
  { name: 'constructor', template: 'x {{a.constructor}}', code: 'forbidden_key', position: 6 },
  { name: 'prototype, quoted', template: '{{a["prototype"]}}', code: 'forbidden_key', position: 5 },
  { name: 'forbidden root', template: '{{constructor}}', code: 'forbidden_key', position: 2 },
]

describe('parseTemplate: errors carry a code and the offset', () => {
  it.each(invalid)('$name', ({ template, code, position }) => {
    const parsed = parseTemplate(template)
    expect(parsed.ok).toBe(false)
    if (parsed.ok) return
    expect(parsed.error).toMatchObject({ code, position })
    expect(parsed.error.message).toContain(`offset ${position}`)
    expect(checkTemplate(template)).toEqual(parsed.error)
  })
})

describe('checkTemplate', () => {
  const roots = ['$trigger', '$steps', '$user', '$flow', '$run', '$now']

  it.each([
    { template: 'plain', error: null },
    { template: '{{$trigger.body.x}} at {{$now}}', error: null },
    { template: '{{= $anything }}', error: null },
    { template: 'to {{$env.SECRET}}', error: { code: 'unknown_root', position: 3 } },
    { template: '{{trigger.body}}', error: { code: 'unknown_root', position: 0 } },
  ])('roots given: $template', ({ template, error }) => {
    const found = checkTemplate(template, { roots })
    if (error === null) expect(found).toBeNull()
    else expect(found).toMatchObject(error)
  })

  it('any root without the option', () => {
    expect(checkTemplate('{{$env.SECRET}} {{name}}')).toBeNull()
  })
})
