import { describe, expect, it } from 'vitest'
import { readBlueprint } from '../document/read.js'
import { brick, documentOf, lineOf } from '../document/test-document.js'
import { brickKindNames, brickKinds } from './index.js'

const only = (source: string, code: string) => readBlueprint(source).diagnostics.filter((d) => d.code === code)

describe('the brick kind registry', () => {
  it("holds exactly the spec's fifteen kinds, in its order, one file each", () => {
    expect(brickKinds.map((k) => k.kind)).toEqual([
      'collection',
      'access',
      'grants',
      'role',
      'records',
      'flow',
      'script',
      'lens',
      'attachment',
      'renderer',
      'view',
      'nav',
      'webhook',
      'search-index',
      'container',
    ])
    expect(brickKindNames).toEqual(brickKinds.map((k) => k.kind))
  })

  it('rule 1 names the kinds whose created name is checked: collection, role, container, search-index, webhook, script (name) and nav (label)', () => {
    const named = Object.fromEntries(brickKinds.filter((k) => k.namedBy).map((k) => [k.kind, k.namedBy]))
    expect(named).toEqual({
      collection: 'name',
      role: 'name',
      script: 'name',
      nav: 'label',
      webhook: 'name',
      'search-index': 'name',
      container: 'name',
    })
  })
})

describe('naming.missing_namespace', () => {
  const bodies: Record<string, Record<string, unknown>> = {
    collection: { name: 'tickets', accessPreset: 'private' },
    role: { name: 'agents' },
    container: { name: 'uploads' },
    'search-index': { name: 'everything' },
    webhook: { name: 'notify', collection: '${params.prefix}_tickets', url: 'https://example.com' },
    script: { name: 'tidy', code: 'return 1' },
    nav: { label: 'Desk', target: { kind: 'url', ref: 'https://example.com' } },
  }

  it.each(Object.keys(bodies))('%s: its name (label) must embed ${params.prefix}', (kind) => {
    const source = documentOf([brick(`${kind} id=x`, bodies[kind])])
    expect(readBlueprint(source).diagnostics).toEqual([
      {
        severity: 'error',
        code: 'naming.missing_namespace',
        message: expect.stringContaining('${params.prefix}'),
        line: lineOf(source, `service:${kind}`),
        brickId: 'x',
      },
    ])
    const field = kind === 'nav' ? 'label' : 'name'
    const named = { ...bodies[kind], [field]: `\${params.prefix}_${bodies[kind]![field]}` }
    expect(readBlueprint(documentOf([brick(`${kind} id=x`, named)])).diagnostics).toEqual([])
  })

  it('a webhook with no name at all is reported too', () => {
    const source = documentOf([brick('webhook id=w', { collection: 'x', url: 'https://example.com' })])
    expect(only(source, 'naming.missing_namespace')).toHaveLength(1)
  })

  it.each([
    ['view', { name: 'All tickets', collection: '${params.prefix}_tickets' }],
    ['flow', { name: 'Escalate', trigger: { type: 'manual' } }],
    ['lens', { name: 'Summary' }],
    ['renderer', { name: 'Card', collection: 'x', kind: 'card', template: '{{title}}' }],
  ])('%s names are not checked', (kind, body) => {
    expect(readBlueprint(documentOf([brick(`${kind} id=x`, body)])).diagnostics).toEqual([])
  })
})

describe('collection bricks', () => {
  const collection = (extra: Record<string, unknown>) =>
    documentOf([brick('collection id=c', { name: '${params.prefix}_tickets', fields: [], ...extra })])

  it('access.preset_required: accessPreset is not stated', () => {
    const source = collection({})
    expect(readBlueprint(source).diagnostics).toEqual([
      {
        severity: 'error',
        code: 'access.preset_required',
        message: expect.stringContaining('accessPreset: private'),
        line: lineOf(source, 'service:collection'),
        brickId: 'c',
      },
    ])
  })

  it.each([
    ['accessPreset team', { accessPreset: 'team' }],
    ['accessPreset public', { accessPreset: 'public' }],
    ['accessControl.preset public', { accessControl: { preset: 'public' } }],
    ['the two spellings disagreeing', { accessPreset: 'private', accessControl: { preset: 'team' } }],
  ])('access.preset_not_private: %s', (_, extra) => {
    const source = collection(extra)
    expect(readBlueprint(source).diagnostics).toEqual([
      {
        severity: 'error',
        code: 'access.preset_not_private',
        message: expect.stringContaining('must be private'),
        line: lineOf(source, 'service:collection'),
        brickId: 'c',
      },
    ])
  })

  it('accessPreset: private, or the route spelling accessControl.preset private, is accepted', () => {
    expect(readBlueprint(collection({ accessPreset: 'private' })).diagnostics).toEqual([])
    expect(readBlueprint(collection({ accessControl: { preset: 'private', sharing: false } })).diagnostics).toEqual([])
  })
})

describe('nav bricks', () => {
  const nav = (extra: Record<string, unknown>) =>
    documentOf([
      brick('nav id=n', {
        label: '${params.prefix} Desk',
        target: { kind: 'url', ref: 'https://example.com' },
        ...extra,
      }),
    ])

  it.each([
    ['a parentId', { parentId: 'abc' }, 'parentId'],
    ['a scope', { scope: 'personal' }, 'scope'],
  ])('brick.nav_not_top_level: %s is refused', (_, extra, word) => {
    const source = nav(extra)
    expect(readBlueprint(source).diagnostics).toEqual([
      {
        severity: 'error',
        code: 'brick.nav_not_top_level',
        message: expect.stringContaining(word),
        line: lineOf(source, 'service:nav'),
        brickId: 'n',
      },
    ])
  })

  it('parentId null is the top level', () => {
    expect(readBlueprint(nav({ parentId: null })).diagnostics).toEqual([])
  })
})

describe('attachment bricks', () => {
  const attachment = (body: Record<string, unknown>) =>
    documentOf([
      brick('attachment id=a', {
        collection: '${params.prefix}_tickets',
        placement: 'record',
        label: 'Summary',
        ...body,
      }),
    ])

  it('a lens addressed by its lensId is accepted', () => {
    const report = readBlueprint(attachment({ lensId: 'lens_123' }))
    expect(report.diagnostics).toEqual([])
    expect(report.blocked).toEqual([])
  })

  it.each([
    ['an @ref string', { lensId: '@ref:summary-lens' }],
    ['an @ref object', { lensId: { '@ref': 'summary-lens' } }],
    ['a lens given some other way', { lens: { '@ref': 'summary-lens' } }],
  ])('brick.late_bound_lens: %s is a BLOCKED reason for the plan, a warning here', (_, body) => {
    const source = attachment(body)
    const report = readBlueprint(source)
    expect(report.ok).toBe(true)
    expect(report.diagnostics).toEqual([
      {
        severity: 'warning',
        code: 'brick.late_bound_lens',
        message: expect.stringContaining('lensId'),
        line: lineOf(source, 'service:attachment'),
        brickId: 'a',
      },
    ])
    expect(report.blocked).toEqual([{ brickId: 'a', reason: 'brick.late_bound_lens', message: expect.any(String) }])
  })

  it('brick.invalid_body: no lensId at all', () => {
    const source = attachment({})
    expect(only(source, 'brick.invalid_body')).toEqual([
      expect.objectContaining({ severity: 'error', brickId: 'a', line: lineOf(source, 'service:attachment') }),
    ])
  })
})
