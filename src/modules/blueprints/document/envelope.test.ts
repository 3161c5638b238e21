import { describe, expect, it } from 'vitest'
import { readBlueprint } from './read.js'
import { documentOf, envelope, lineOf, ticketsCollection } from './test-document.js'

const only = (source: string, code: string) => readBlueprint(source).diagnostics.filter((d) => d.code === code)

describe('the envelope', () => {
  it('a complete document validates with no diagnostic', () => {
    const report = readBlueprint(documentOf([ticketsCollection]))
    expect(report.diagnostics).toEqual([])
    expect(report.ok).toBe(true)
    expect(report.envelope).toMatchObject({ id: 'help-desk', name: 'Help desk', version: '1.0.0' })
  })

  it('envelope.missing: a document without front matter (its bricks are still read)', () => {
    const report = readBlueprint(`# Just prose\n\n${ticketsCollection}`)
    expect(report.diagnostics).toEqual([
      {
        severity: 'error',
        code: 'envelope.missing',
        message: expect.stringContaining('front matter'),
        line: 1,
        brickId: null,
      },
    ])
    expect(report.bricks.map((b) => b.id)).toEqual(['tickets'])
  })

  it('envelope.unterminated: front matter that never closes (nothing else is read)', () => {
    const report = readBlueprint('---\nformat: service-blueprint-v1\nid: help-desk\n\n```service:nav id=x\n{}\n```\n')
    expect(report.diagnostics).toEqual([
      expect.objectContaining({ code: 'envelope.unterminated', severity: 'error', line: 1, brickId: null }),
    ])
    expect(report.bricks).toEqual([])
  })

  it.each([
    ['another value', 'format: markdown-v9', /"markdown-v9" is not supported/],
    ['the first notebook format', 'format: service-notebook-v1', /service-notebook-v1 is a notebook document/],
    ['the second notebook format', 'format: service-notebook-v2', /service-notebook-v2 is a notebook document/],
    ['the v2 blueprint', 'format: service-blueprint-v2', /service-blueprint-v2 is a v2 blueprint/],
  ])('envelope.unsupported_format: %s is refused by name and the rest is not read', (_, line, message) => {
    const source = documentOf([ticketsCollection]).replace('format: service-blueprint-v1', line)
    const report = readBlueprint(source)
    expect(report.diagnostics).toEqual([
      {
        severity: 'error',
        code: 'envelope.unsupported_format',
        message: expect.stringMatching(message),
        line: 2,
        brickId: null,
      },
    ])
    expect(report.bricks).toEqual([])
  })

  it('envelope.unsupported_format: no format, or a format that is not the first line', () => {
    const none = documentOf([]).replace('format: service-blueprint-v1\n', '')
    expect(only(none, 'envelope.unsupported_format')).toEqual([
      expect.objectContaining({ message: expect.stringContaining('declares no format'), line: 2 }),
    ])
    const late = documentOf([]).replace(
      'format: service-blueprint-v1\nid: help-desk',
      'id: help-desk\nformat: service-blueprint-v1',
    )
    expect(only(late, 'envelope.unsupported_format')).toEqual([
      expect.objectContaining({ message: expect.stringContaining('first line'), line: 3 }),
    ])
  })

  it('envelope.removed_key: publisher and requires are warnings (the document still validates)', () => {
    const source = documentOf([ticketsCollection], { extra: 'publisher: acme\nrequires: [other]' })
    const report = readBlueprint(source)
    expect(report.ok).toBe(true)
    expect(report.diagnostics).toEqual([
      expect.objectContaining({
        severity: 'warning',
        code: 'envelope.removed_key',
        line: lineOf(source, 'publisher'),
        brickId: null,
      }),
      expect.objectContaining({
        severity: 'warning',
        code: 'envelope.removed_key',
        line: lineOf(source, 'requires'),
        brickId: null,
      }),
    ])
  })

  it.each([
    ['an anchor', 'meta: &base\n  a: 1', 'anchor &base', 'meta:'],
    ['an alias', 'notes: *nothing', 'alias *nothing', 'notes:'],
    ['a merge key', 'extras:\n  <<: {a: 1}', 'merge key <<', '<<'],
  ])('envelope.unsupported_syntax: %s', (_, extra, message, at) => {
    const source = documentOf([], { extra })
    expect(only(source, 'envelope.unsupported_syntax')).toEqual([
      {
        severity: 'error',
        code: 'envelope.unsupported_syntax',
        message: expect.stringContaining(message),
        line: lineOf(source, at),
        brickId: null,
      },
    ])
  })

  it('envelope.unsupported_syntax: a billion-laughs envelope is refused without expanding a single alias', () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for (let i = 1; i < 12; i++)
      levels.push(
        `${'b'.repeat(i)}: &${'b'.repeat(i)} [${Array(9)
          .fill(i === 1 ? '*a' : `*${'b'.repeat(i - 1)}`)
          .join(',')}]`,
      )
    const source = `---\nformat: service-blueprint-v1\n${levels.join('\n')}\n---\n`
    const report = readBlueprint(source)
    expect(report.ok).toBe(false)
    expect(report.diagnostics.every((d) => d.code === 'envelope.unsupported_syntax')).toBe(true)
    expect(report.diagnostics.length).toBeGreaterThan(12)
  })

  it.each([
    ['a bad id', 'id: Help_Desk', 'id: Help_Desk'],
    ['a number', 'id: 12345', 'id: 12345'],
    ['too short', 'id: ab', 'id: ab'],
  ])('envelope.invalid_id: %s', (_, line, at) => {
    const source = documentOf([]).replace('id: help-desk', line)
    expect(only(source, 'envelope.invalid_id')).toEqual([
      {
        severity: 'error',
        code: 'envelope.invalid_id',
        message: expect.stringContaining('[a-z]'),
        line: lineOf(source, at),
        brickId: null,
      },
    ])
  })

  it('envelope.invalid_id, invalid_name and invalid_version when the keys are missing (line 2)', () => {
    const source = documentOf([]).replace('id: help-desk\nname: Help desk\nversion: 1.0.0\n', '')
    expect(readBlueprint(source).diagnostics.map((d) => [d.code, d.line])).toEqual([
      ['envelope.invalid_id', 2],
      ['envelope.invalid_name', 2],
      ['envelope.invalid_version', 2],
    ])
  })

  it.each(['1.0', '1', 'v1.0.0', '1.0.0-', '01.0.0', '1.0.0+'])('envelope.invalid_version: %s', (version) => {
    const source = documentOf([]).replace('version: 1.0.0', `version: ${version}`)
    expect(only(source, 'envelope.invalid_version')).toEqual([
      {
        severity: 'error',
        code: 'envelope.invalid_version',
        message: expect.stringContaining('semantic'),
        line: 5,
        brickId: null,
      },
    ])
  })

  it.each(['1.0.0', '0.1.0-beta.2', '2.3.4+build.7', '10.20.30-rc.1+x'])(
    'a semver version is accepted: %s',
    (version) => {
      expect(readBlueprint(documentOf([ticketsCollection]).replace('version: 1.0.0', `version: "${version}"`)).ok).toBe(
        true,
      )
    },
  )

  it('envelope.invalid_name: a name that is not text', () => {
    const source = documentOf([]).replace('name: Help desk', 'name: [a, b]')
    expect(only(source, 'envelope.invalid_name')).toEqual([
      expect.objectContaining({ severity: 'error', line: 4, brickId: null }),
    ])
  })

  it('envelope.unknown_key: no other envelope keys exist', () => {
    const source = documentOf([ticketsCollection], { extra: 'license: MIT' })
    expect(only(source, 'envelope.unknown_key')).toEqual([
      {
        severity: 'error',
        code: 'envelope.unknown_key',
        message: expect.stringContaining('license is not an envelope key'),
        line: lineOf(source, 'license'),
        brickId: null,
      },
    ])
  })

  it.each([
    ['bad YAML', 'broken: [a, b', 'broken'],
    ['a key given twice', 'id: other', 'id: other'],
    ['a complex key', '? [a, b]\n: c', '? [a'],
  ])('envelope.invalid_yaml: %s', (_, extra, at) => {
    const source = documentOf([], { extra })
    const found = only(source, 'envelope.invalid_yaml')
    expect(found).toHaveLength(1)
    expect(found[0]).toMatchObject({ severity: 'error', brickId: null })
    expect(found[0]!.line).toBeGreaterThanOrEqual(lineOf(source, at))
  })

  it('envelope.invalid_yaml: front matter that is not a mapping', () => {
    expect(only('---\n- a\n- b\n---\n', 'envelope.invalid_yaml')).toEqual([expect.objectContaining({ line: 2 })])
  })

  it('envelope.invalid_yaml: nesting deeper than 16 levels is refused before the YAML is composed', () => {
    const flow = `---\nformat: service-blueprint-v1\nx: ${'['.repeat(60_000)}\n---\n`
    expect(only(flow, 'envelope.invalid_yaml')).toEqual([
      expect.objectContaining({ message: expect.stringContaining('deeper than 16'), line: 3 }),
    ])
    const block = `---\nformat: service-blueprint-v1\n${Array.from({ length: 40 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n')}\n---\n`
    expect(only(block, 'envelope.invalid_yaml')).toEqual([
      expect.objectContaining({ message: expect.stringContaining('deeper than 16') }),
    ])
    expect(
      only(`---\nformat: service-blueprint-v1\nx: ${'- '.repeat(30_000)}\n---\n`, 'envelope.invalid_yaml'),
    ).toHaveLength(1)
  })

  it('envelope.too_large: front matter over 65,536 bytes is not parsed', () => {
    const source = `${envelope({ extra: `# ${'x'.repeat(70_000)}` })}\n${ticketsCollection}`
    expect(readBlueprint(source).diagnostics).toEqual([
      {
        severity: 'error',
        code: 'envelope.too_large',
        message: expect.stringContaining('65536'),
        line: 1,
        brickId: null,
      },
    ])
  })

  it('reads CRLF line endings and a byte-order mark', () => {
    const source = `\uFEFF${documentOf([ticketsCollection])}`.replaceAll('\n', '\r\n')
    expect(readBlueprint(source)).toMatchObject({ ok: true, diagnostics: [] })
  })
})
