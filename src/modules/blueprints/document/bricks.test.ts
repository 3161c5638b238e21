import { describe, expect, it } from 'vitest'
import { readInfoString } from './info-string.js'
import { readBlueprint } from './read.js'
import { brick, documentOf, lineOf, ticketsCollection } from './test-document.js'

const only = (source: string, code: string) => readBlueprint(source).diagnostics.filter((d) => d.code === code)
const nav = (id: string, extra = '') =>
  brick(`nav id=${id}${extra}`, { label: '${params.prefix} Desk', target: { kind: 'url', ref: 'https://example.com' } })

describe('brick fences', () => {
  it('reads id, kind, needs and title; other fences are prose and install nothing', () => {
    const source = documentOf([
      ticketsCollection,
      '```json\n{"not": "a brick"}\n```\n',
      '```\nplain\n```\n',
      '    ```service:nav id=indented\n    {}\n    ```\n',
      '<div>\n```service:nav id=in-html\n{}\n```\n</div>\n',
      brick('records id=seed needs=tickets title="First \\"tickets\\""', {
        collection: '${params.prefix}_tickets',
        rows: [],
      }),
      '~~~ service:role id=staff\n{"name": "${params.prefix}_staff"}\n~~~\n',
      '> ```service:nav id=quoted\n> {"label": "${params.prefix} quoted", "target": {"kind": "url", "ref": "https://example.com"}}\n> ```\n',
    ])
    const report = readBlueprint(source)
    expect(report.diagnostics).toEqual([])
    expect(report.bricks.map((b) => [b.id, b.kind, b.needs, b.title, b.line])).toEqual([
      ['tickets', 'collection', [], null, lineOf(source, 'service:collection')],
      ['seed', 'records', ['tickets'], 'First "tickets"', lineOf(source, 'service:records')],
      ['staff', 'role', [], null, lineOf(source, 'service:role')],
      ['quoted', 'nav', [], null, lineOf(source, 'service:nav id=quoted')],
    ])
  })

  it('brick.unknown_kind: refused, never skipped, with a message naming the fifteen kinds', () => {
    const source = documentOf([brick('gadget id=g', {})])
    expect(readBlueprint(source).diagnostics).toEqual([
      {
        severity: 'error',
        code: 'brick.unknown_kind',
        message:
          '"gadget" is not a brick kind; the fifteen kinds are collection, access, grants, role, records, flow, script, lens, attachment, renderer, view, nav, webhook, search-index, container',
        line: lineOf(source, 'service:gadget'),
        brickId: 'g',
      },
    ])
  })

  it('brick.missing_id: a fence without id (brickId null)', () => {
    const source = documentOf([brick('view', { name: 'All' })])
    expect(readBlueprint(source).diagnostics).toEqual([
      {
        severity: 'error',
        code: 'brick.missing_id',
        message: expect.stringContaining('id='),
        line: lineOf(source, 'service:view'),
        brickId: null,
      },
    ])
  })

  it('brick.duplicate_id: at the second brick with the id; the first is kept', () => {
    const source = documentOf([nav('menu'), nav('menu')])
    const report = readBlueprint(source)
    expect(report.diagnostics).toEqual([
      {
        severity: 'error',
        code: 'brick.duplicate_id',
        message: expect.stringContaining('menu'),
        line: lineOf(source, 'service:nav', 2),
        brickId: 'menu',
      },
    ])
    expect(report.bricks.map((b) => b.line)).toEqual([lineOf(source, 'service:nav')])
  })

  it('brick.unterminated: a fence that never closes', () => {
    const source = `${documentOf([ticketsCollection])}\n\`\`\`service:view id=open\n{"name": "All"}\n`
    expect(readBlueprint(source).diagnostics).toEqual([
      {
        severity: 'error',
        code: 'brick.unterminated',
        message: expect.any(String),
        line: lineOf(source, 'service:view'),
        brickId: 'open',
      },
    ])
  })

  it('brick.unterminated: an opening fence on the last line', () => {
    const source = `${documentOf([])}\n\`\`\`service:view id=last`
    expect(only(source, 'brick.unterminated')).toEqual([
      expect.objectContaining({ line: lineOf(source, 'service:view'), brickId: 'last' }),
    ])
  })

  it('brick.invalid_json: at the line the parser stopped on', () => {
    const source = documentOf([brick('view id=v', '{\n  "name": "All",\n  "limit": ,\n}')])
    expect(readBlueprint(source).diagnostics).toEqual([
      {
        severity: 'error',
        code: 'brick.invalid_json',
        message: expect.stringContaining('not JSON'),
        line: lineOf(source, '"limit"'),
        brickId: 'v',
      },
    ])
  })

  it.each([
    ['an empty body', '', 'empty'],
    ['a body nesting 100,000 deep', `${'['.repeat(100_000)}${']'.repeat(100_000)}`, 'deeper than 256'],
    ['a __proto__ key', '{"name": "x", "__proto__": {"admin": true}}', '__proto__'],
  ])('brick.invalid_json: %s is a diagnostic, not a crash', (_, body, message) => {
    const source = documentOf([brick('view id=v', body)])
    expect(readBlueprint(source).diagnostics).toEqual([
      {
        severity: 'error',
        code: 'brick.invalid_json',
        message: expect.stringContaining(message),
        line: expect.any(Number),
        brickId: 'v',
      },
    ])
  })

  it.each([
    ['an array', '[1, 2]'],
    ['a string', '"text"'],
    ['null', 'null'],
  ])('brick.invalid_body: %s is not a JSON object', (_, body) => {
    const source = documentOf([brick('view id=v', body)])
    expect(readBlueprint(source).diagnostics).toEqual([
      {
        severity: 'error',
        code: 'brick.invalid_body',
        message: expect.stringContaining('JSON object'),
        line: lineOf(source, body),
        brickId: 'v',
      },
    ])
  })

  it.each([
    ['an unknown attribute', 'view id=v colour=red', 'unknown attribute colour', 'v'],
    ['a quote that never closes', 'view id=v title="open', 'never closes', 'v'],
    ['an id with a space in quotes', 'view id="a b"', 'not a brick id', null],
    ['an attribute twice', 'view id=v id=w', 'given twice', 'v'],
    ['an empty need', 'view id=v needs=a,,b', 'not a brick id', 'v'],
  ])('brick.invalid_info: %s', (_, info, message, brickId) => {
    const source = documentOf([brick(info, { name: 'All' })])
    expect(readBlueprint(source).diagnostics).toEqual([
      {
        severity: 'error',
        code: 'brick.invalid_info',
        message: expect.stringContaining(message),
        line: lineOf(source, 'service:view'),
        brickId,
      },
    ])
  })
})

describe('readInfoString', () => {
  it.each([
    ['service:nav id=a', { kind: 'nav', id: 'a', needs: [], title: null }],
    ['service:nav    id=a   needs=b,c  ', { kind: 'nav', id: 'a', needs: ['b', 'c'], title: null }],
    ['service:nav id=a needs=b,b', { kind: 'nav', id: 'a', needs: ['b'], title: null }],
    ['service:nav title="A \\\\ b" id="x.y-z_1"', { kind: 'nav', id: 'x.y-z_1', needs: [], title: 'A \\ b' }],
    ['service:nav title=Single id=a', { kind: 'nav', id: 'a', needs: [], title: 'Single' }],
    ['service:', { kind: '', id: null, needs: [], title: null }],
  ])('%s', (info, expected) => {
    expect(readInfoString(info)).toEqual({ ok: true, info: expected })
  })
})
