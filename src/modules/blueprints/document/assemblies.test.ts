import { describe, expect, it } from 'vitest'
import { selectAssemblies, selectedBrickIds, type AssemblyDecl } from './assemblies.js'
import { readBlueprint } from './read.js'
import { brick, documentOf, lineOf } from './test-document.js'

const view = (id: string) => brick(`view id=${id}`, { name: 'All' })
const only = (source: string, code: string) => readBlueprint(source).diagnostics.filter((d) => d.code === code)

describe('assemblies', () => {
  const extra =
    'assemblies:\n  core:\n    title: Core\n    required: true\n    bricks: [a]\n  reports:\n    title: Reports\n    bricks:\n      - b\n      - ghost\n'

  it('reads key, title, required (false unless said) and bricks', () => {
    const report = readBlueprint(documentOf([view('a'), view('b')], { extra: extra.replace('      - ghost\n', '') }))
    expect(report.diagnostics).toEqual([])
    expect(report.envelope?.assemblies.map((a) => [a.key, a.title, a.required, a.bricks])).toEqual([
      ['core', 'Core', true, ['a']],
      ['reports', 'Reports', false, ['b']],
    ])
  })

  it('assemblies.unknown_brick: at the line listing it', () => {
    const source = documentOf([view('a'), view('b')], { extra })
    expect(readBlueprint(source).diagnostics).toEqual([
      {
        severity: 'error',
        code: 'assemblies.unknown_brick',
        message: expect.stringContaining('"ghost"'),
        line: lineOf(source, '- ghost'),
        brickId: null,
      },
    ])
  })

  it('assemblies.orphan_brick: a warning at the brick; it installs unconditionally', () => {
    const source = documentOf([view('a'), view('b'), view('loose')], { extra: extra.replace('      - ghost\n', '') })
    const report = readBlueprint(source)
    expect(report.ok).toBe(true)
    expect(report.diagnostics).toEqual([
      {
        severity: 'warning',
        code: 'assemblies.orphan_brick',
        message: expect.stringContaining('loose'),
        line: lineOf(source, 'id=loose'),
        brickId: 'loose',
      },
    ])
  })

  it('no orphan warning when the document declares no assemblies', () => {
    expect(readBlueprint(documentOf([view('a')])).diagnostics).toEqual([])
  })

  it.each([
    ['not a mapping', 'assemblies: [a]', 'assemblies:'],
    ['no title', 'assemblies:\n  core:\n    bricks: [a]', 'core:'],
    ['no bricks', 'assemblies:\n  core:\n    title: Core', 'core:'],
    [
      'required not a boolean',
      'assemblies:\n  core:\n    title: Core\n    required: maybe\n    bricks: [a]',
      'required:',
    ],
    ['an unknown key', 'assemblies:\n  core:\n    title: Core\n    colour: red\n    bricks: [a]', 'colour'],
    ['a brick id that is not text', 'assemblies:\n  core:\n    title: Core\n    bricks: [[a]]', 'bricks:'],
  ])('assemblies.invalid: %s', (_, block, at) => {
    const source = documentOf([view('a')], { extra: block })
    expect(only(source, 'assemblies.invalid')).toEqual([
      {
        severity: 'error',
        code: 'assemblies.invalid',
        message: expect.any(String),
        line: lineOf(source, at),
        brickId: null,
      },
    ])
  })
})

describe('selecting assemblies', () => {
  const decl = (key: string, required: boolean, bricks: string[]): AssemblyDecl => ({
    key,
    title: key,
    required,
    bricks,
    line: 1,
    brickLines: [],
  })
  const assemblies = [decl('core', true, ['a']), decl('reports', false, ['b']), decl('extras', false, ['c'])]

  it('omitted means all; a required assembly is always in; unknown keys are ignored', () => {
    expect(selectAssemblies(assemblies, undefined).map((a) => a.key)).toEqual(['core', 'reports', 'extras'])
    expect(selectAssemblies(assemblies, []).map((a) => a.key)).toEqual(['core'])
    expect(selectAssemblies(assemblies, ['extras', 'nothing']).map((a) => a.key)).toEqual(['core', 'extras'])
  })

  it('the bricks taken: the selected assemblies’ and every brick in no assembly', () => {
    expect([...selectedBrickIds(assemblies, ['reports'], ['a', 'b', 'c', 'loose'])]).toEqual(['a', 'b', 'loose'])
  })
})
