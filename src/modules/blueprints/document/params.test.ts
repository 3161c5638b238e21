import { describe, expect, it } from 'vitest'
import { identifierValue, paramValueProblem } from './params.js'
import { readBlueprint } from './read.js'
import { brick, documentOf, lineOf, namespaceParam, ticketsCollection } from './test-document.js'

const codes = (source: string) => readBlueprint(source).diagnostics.map((d) => d.code)
const only = (source: string, code: string) => readBlueprint(source).diagnostics.filter((d) => d.code === code)

describe('parameters', () => {
  it('reads each declaration; required means no default; a secret is never required to have a value here', () => {
    const params = `${namespaceParam}  - name: title\n    type: string\n  - name: token\n    type: secret\n`
    const report = readBlueprint(documentOf([ticketsCollection], { params }))
    expect(report.ok).toBe(true)
    expect(report.envelope?.params?.map((p) => [p.name, p.type, p.namespace, p.hasDefault])).toEqual([
      ['prefix', 'identifier', true, true],
      ['title', 'string', false, false],
      ['token', 'secret', false, false],
    ])
  })

  it('params.no_namespace: no parameter carries namespace: true (at the params line)', () => {
    const source = documentOf([], { params: '  - name: title\n    type: string\n' })
    expect(only(source, 'params.no_namespace')).toEqual([
      {
        severity: 'error',
        code: 'params.no_namespace',
        message: expect.stringContaining('none does'),
        line: lineOf(source, 'params:'),
        brickId: null,
      },
    ])
  })

  it('params.no_namespace: no params at all (line null)', () => {
    const source = documentOf([]).replace(/params:\n(?: {2}.*\n)+/, '')
    expect(only(source, 'params.no_namespace')).toEqual([
      expect.objectContaining({ severity: 'error', line: null, brickId: null }),
    ])
  })

  it('params.multiple_namespace: at the second namespace parameter', () => {
    const source = documentOf([], {
      params: `${namespaceParam}  - name: other\n    type: identifier\n    namespace: true\n`,
    })
    expect(only(source, 'params.multiple_namespace')).toEqual([
      {
        severity: 'error',
        code: 'params.multiple_namespace',
        message: expect.stringContaining('prefix and other'),
        line: lineOf(source, '- name: other'),
        brickId: null,
      },
    ])
  })

  it('params.secret_default: a secret with a default; the default is neither kept nor repeated', () => {
    const source = documentOf([], {
      params: `${namespaceParam}  - name: token\n    type: secret\n    default: hunter2-value\n`,
    })
    const report = readBlueprint(source)
    expect(report.diagnostics).toEqual([
      {
        severity: 'error',
        code: 'params.secret_default',
        message: expect.stringContaining('token'),
        line: lineOf(source, 'hunter2'),
        brickId: null,
      },
    ])
    expect(JSON.stringify(report)).not.toContain('hunter2-value')
  })

  it('params.unknown_reference: ${params.x} of an undeclared name, once per name and brick', () => {
    const source = documentOf([
      brick('collection id=tickets', {
        name: '${params.prefix}_${params.missing}',
        accessPreset: 'private',
        x: ['${params.missing}', '${params.bad-name}'],
      }),
    ])
    expect(only(source, 'params.unknown_reference')).toEqual([
      {
        severity: 'error',
        code: 'params.unknown_reference',
        message: '${params.missing} names no declared parameter',
        line: lineOf(source, 'service:collection'),
        brickId: 'tickets',
      },
      {
        severity: 'error',
        code: 'params.unknown_reference',
        message: '${params.bad-name} names no declared parameter',
        line: lineOf(source, 'service:collection'),
        brickId: 'tickets',
      },
    ])
  })

  it('a reference in an object key is not a reference (only string values are compiled)', () => {
    expect(codes(documentOf([brick('view id=v', { name: 'All', options: { '${params.nothing}': 1 } })]))).toEqual([])
  })

  it.each([
    ['an unknown type', '  - name: a\n    type: colour\n', 'type: colour'],
    ['a missing name', '  - type: string\n', 'type: string'],
    ['a bad name', '  - name: 9lives\n    type: string\n', '9lives'],
    ['an unknown key', '  - name: a\n    type: string\n    label: A\n', 'label: A'],
    ['a name given twice', '  - name: prefix\n    type: string\n', '- name: prefix', 2],
    [
      'a namespace that is not an identifier',
      '  - name: a\n    type: string\n    namespace: true\n',
      'namespace: true',
      2,
    ],
    ['a list instead of an entry', '  - [a, b]\n', '- [a, b]'],
  ])('params.invalid: %s', (_, extra, at, nth = 1) => {
    const source = documentOf([], { params: `${namespaceParam}${extra}` })
    expect(only(source, 'params.invalid')).toEqual([
      {
        severity: 'error',
        code: 'params.invalid',
        message: expect.any(String),
        line: lineOf(source, at, nth),
        brickId: null,
      },
    ])
  })

  it('params.invalid: params that is not a list', () => {
    const source = documentOf([]).replace(/params:\n(?: {2}.*\n)+/, 'params: yes\n')
    expect(only(source, 'params.invalid')).toEqual([expect.objectContaining({ line: lineOf(source, 'params: yes') })])
  })

  it.each([
    ['identifier', 'Desk'],
    ['identifier', 'a_very_long_name'],
    ['number', 'many'],
    ['boolean', 'sometimes'],
    ['email', 'not-an-address'],
    ['url', 'ftp://example.com'],
  ])('params.invalid_value: a %s default of %s', (type, value) => {
    const source = documentOf([], {
      params: `${namespaceParam}  - name: p\n    type: ${type}\n    default: ${value}\n`,
    })
    expect(only(source, 'params.invalid_value')).toEqual([
      {
        severity: 'error',
        code: 'params.invalid_value',
        message: expect.stringContaining(`p (${type})`),
        line: lineOf(source, `default: ${value}`),
        brickId: null,
      },
    ])
  })
})

describe('parameter values (rule 6 and the types)', () => {
  it.each([
    ['a', true],
    ['desk', true],
    ['desk_2', true],
    ['abcdefghijkl', true],
    ['abcdefghijklm', false],
    ['Desk', false],
    ['2desk', false],
    ['_desk', false],
    ['de-sk', false],
    ['', false],
  ])('identifier %j → %s', (value, ok) => {
    expect(identifierValue.test(value)).toBe(ok)
    expect(paramValueProblem({ name: 'p', type: 'identifier' }, value) === null).toBe(ok)
  })

  it.each([
    ['string', 'text', true],
    ['string', 5, false],
    ['email', 'ops@example.com', true],
    ['email', 'ops@localhost', false],
    ['url', 'https://example.com/hook', true],
    ['url', 'javascript:alert(1)', false],
    ['number', 42.5, true],
    ['number', '42', false],
    ['boolean', false, true],
    ['boolean', 'false', false],
  ] as const)('%s %j → %s', (type, value, ok) => {
    expect(paramValueProblem({ name: 'p', type }, value) === null).toBe(ok)
  })

  it('a secret parameter takes no value at all', () => {
    expect(paramValueProblem({ name: 'token', type: 'secret' }, 'anything')).toMatch(/secret/)
  })
})
