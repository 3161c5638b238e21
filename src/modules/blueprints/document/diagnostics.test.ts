import { describe, expect, it } from 'vitest'
import { diagnostic, diagnosticSeverity, orderDiagnostics, type DiagnosticCode } from './diagnostics.js'
import { readBlueprint } from './read.js'
import { brick, documentOf, namespaceParam, ticketsCollection } from './test-document.js'

/** The codes of the spec's diagnostics table (§ Blueprint document) and of its records-brick refusals. */
const specCodes = [
  'envelope.missing',
  'envelope.unterminated',
  'envelope.unsupported_format',
  'envelope.removed_key',
  'envelope.unsupported_syntax',
  'envelope.invalid_id',
  'envelope.invalid_version',
  'params.no_namespace',
  'params.multiple_namespace',
  'params.secret_default',
  'params.unknown_reference',
  'naming.missing_namespace',
  'brick.unknown_kind',
  'brick.missing_id',
  'brick.duplicate_id',
  'brick.unterminated',
  'brick.invalid_json',
  'brick.unknown_dependency',
  'brick.dependency_cycle',
  'assemblies.unknown_brick',
  'assemblies.orphan_brick',
  'access.preset_required',
  'access.preset_not_private',
  'plan.version_downgrade',
  'brick.no_row_identity',
  'brick.duplicate_row_identity',
  'brick.ragged_rows',
  'brick.too_many_rows',
  'brick.late_bound_ref',
  'brick.secret_in_seed',
]

const view = (id: string, extra = '') => brick(`view id=${id}${extra}`, { name: 'All' })
const records = (rows: unknown[]) => brick('records id=r', { collection: 'x', rows })
const nav = (body: Record<string, unknown>) => brick('nav id=n', { label: '${params.prefix} x', ...body })

/** A document producing each code (the per-code tests, with lines, are beside each part). */
const examples: Record<Exclude<DiagnosticCode, 'plan.version_downgrade'>, string> = {
  'envelope.missing': 'no front matter',
  'envelope.unterminated': '---\nformat: service-blueprint-v1\n',
  'envelope.too_large': `---\n# ${'x'.repeat(70_000)}\n---\n`,
  'envelope.invalid_yaml': documentOf([], { extra: 'a: [' }),
  'envelope.unsupported_format': '---\nformat: service-notebook-v1\n---\n',
  'envelope.removed_key': documentOf([], { extra: 'publisher: me' }),
  'envelope.unknown_key': documentOf([], { extra: 'colour: red' }),
  'envelope.unsupported_syntax': documentOf([], { extra: 'a: &x 1' }),
  'envelope.invalid_id': documentOf([]).replace('id: help-desk', 'id: X'),
  'envelope.invalid_name': documentOf([]).replace('name: Help desk', 'name: 5'),
  'envelope.invalid_version': documentOf([]).replace('version: 1.0.0', 'version: one'),
  'params.invalid': documentOf([], { params: `${namespaceParam}  - name: a\n    type: colour\n` }),
  'params.invalid_value': documentOf([], {
    params: `${namespaceParam}  - name: a\n    type: number\n    default: x\n`,
  }),
  'params.no_namespace': documentOf([], { params: '  - name: a\n    type: string\n' }),
  'params.multiple_namespace': documentOf([], { params: `${namespaceParam}${namespaceParam.replace('prefix', 'p2')}` }),
  'params.secret_default': documentOf([], {
    params: `${namespaceParam}  - name: s\n    type: secret\n    default: x\n`,
  }),
  'params.unknown_reference': documentOf([brick('view id=v', { name: '${params.nope}' })]),
  'naming.missing_namespace': documentOf([brick('role id=r', { name: 'staff' })]),
  'assemblies.invalid': documentOf([], { extra: 'assemblies: [a]' }),
  'assemblies.unknown_brick': documentOf([view('a')], {
    extra: 'assemblies:\n  core:\n    title: Core\n    bricks: [b]',
  }),
  'assemblies.orphan_brick': documentOf([view('a'), view('b')], {
    extra: 'assemblies:\n  core:\n    title: Core\n    bricks: [a]',
  }),
  'brick.invalid_info': documentOf([view('a', ' colour=red')]),
  'brick.unknown_kind': documentOf([brick('gadget id=g', {})]),
  'brick.missing_id': documentOf([brick('view', { name: 'All' })]),
  'brick.duplicate_id': documentOf([view('a'), view('a')]),
  'brick.unterminated': `${documentOf([])}\`\`\`service:view id=a\n{}\n`,
  'brick.invalid_json': documentOf([brick('view id=v', '{')]),
  'brick.invalid_body': documentOf([brick('view id=v', '[]')]),
  'brick.unknown_dependency': documentOf([view('a', ' needs=b')]),
  'brick.dependency_cycle': documentOf([view('a', ' needs=a')]),
  'access.preset_required': documentOf([brick('collection id=c', { name: '${params.prefix}_c' })]),
  'access.preset_not_private': documentOf([
    brick('collection id=c', { name: '${params.prefix}_c', accessPreset: 'team' }),
  ]),
  'brick.no_row_identity': documentOf([records([{ colour: 'red' }])]),
  'brick.duplicate_row_identity': documentOf([records([{ slug: 'a' }, { slug: 'a' }])]),
  'brick.ragged_rows': documentOf([records([{ slug: 'a' }, { slug: 'b', x: 1 }])]),
  'brick.too_many_rows': documentOf([records(Array.from({ length: 201 }, (_, i) => ({ slug: `s${i}` })))]),
  'brick.late_bound_ref': documentOf([records([{ slug: 'a', owner: '@ref:x' }])]),
  'brick.secret_in_seed': documentOf([records([{ slug: 'a', key: '${secret:token}' }])]),
  'brick.late_bound_lens': documentOf([brick('attachment id=a', { lensId: '@ref:lens' })]),
  'brick.nav_not_top_level': documentOf([nav({ scope: 'mine' })]),
  'diagnostics.truncated': documentOf(Array.from({ length: 1001 }, (_, i) => view(`v${i}`, ' needs=ghost'))),
}

describe('the diagnostic catalog', () => {
  it("holds every code of the spec's table, with the spec's warnings as warnings", () => {
    for (const code of specCodes) expect(diagnosticSeverity, code).toHaveProperty([code])
    const warnings = Object.entries(diagnosticSeverity)
      .filter(([, s]) => s === 'warning')
      .map(([c]) => c)
    expect(warnings.sort()).toEqual(
      [
        'envelope.removed_key',
        'assemblies.orphan_brick',
        'plan.version_downgrade',
        'brick.late_bound_lens',
        'diagnostics.truncated',
      ].sort(),
    )
  })

  it('every code but plan.version_downgrade (plan only) has a document that produces it, with its severity', () => {
    expect(Object.keys(examples).sort()).toEqual(
      Object.keys(diagnosticSeverity)
        .filter((c) => c !== 'plan.version_downgrade')
        .sort(),
    )
    for (const [code, source] of Object.entries(examples)) {
      const found = readBlueprint(source).diagnostics.find((d) => d.code === code)
      expect(found, code).toMatchObject({ severity: diagnosticSeverity[code as DiagnosticCode] })
    }
  })

  it('diagnostics.truncated: past 1,000 diagnostics, one warning says how many more there were', () => {
    const report = readBlueprint(examples['diagnostics.truncated'])
    expect(report.ok).toBe(false)
    expect(report.diagnostics).toHaveLength(1001)
    expect(report.diagnostics[1000]).toEqual({
      severity: 'warning',
      code: 'diagnostics.truncated',
      message: '1 more diagnostics are not listed',
      line: null,
      brickId: null,
    })
  })

  it('orders diagnostics by line, those without one last, keeping the order found for equal lines', () => {
    const d = (code: DiagnosticCode, line: number | null) => diagnostic(code, code, line)
    const ordered = orderDiagnostics([
      d('brick.missing_id', 9),
      d('params.no_namespace', null),
      d('envelope.invalid_id', 2),
      d('brick.unterminated', 9),
    ])
    expect(ordered.map((x) => [x.code, x.line])).toEqual([
      ['envelope.invalid_id', 2],
      ['brick.missing_id', 9],
      ['brick.unterminated', 9],
      ['params.no_namespace', null],
    ])
  })

  it('a valid document has no diagnostic at all', () => {
    expect(readBlueprint(documentOf([ticketsCollection])).diagnostics).toEqual([])
  })
})
