import { describe, expect, it } from 'vitest'
import { createOperationRegistry } from './registry.js'
import { literalFlag, literalText } from './needs.js'

const registry = createOperationRegistry()
const step = (type: string, config: Record<string, unknown> = {}, key = 's') => ({ key, type, config })

describe('registry.effectsOf: what a step may do with its config as saved', () => {
  it.each([
    ['an unknown type writes', step('no_such_op'), 'writes'],
    ['log computes', step('log', { message: 'x' }), 'none'],
    ['crud_create writes', step('crud_create', { collection: 'notes', data: {} }), 'writes'],
    ['crud_read reads', step('crud_read', { collection: 'notes' }), 'reads'],
    ['crud_action without action reads (read is its default)', step('crud_action', { collection: 'notes' }), 'reads'],
    ['crud_action query reads', step('crud_action', { collection: 'notes', action: 'query' }), 'reads'],
    ['crud_action delete writes', step('crud_action', { collection: 'notes', action: 'delete', id: '1' }), 'writes'],
    [
      'crud_action with a templated action writes',
      step('crud_action', { collection: 'notes', action: '{{$trigger.body.a}}' }),
      'writes',
    ],
    ['run_script without allowed_domains computes', step('run_script', { code: 'return 1' }), 'none'],
    [
      'run_script with allowed_domains [] computes',
      step('run_script', { code: 'return 1', allowed_domains: [] }),
      'none',
    ],
    ['run_script of a saved script reads it', step('run_script', { scriptId: 'abc' }), 'reads'],
    [
      'run_script with allowed_domains writes',
      step('run_script', { code: 'return 1', allowed_domains: ['api.example.com'] }),
      'writes',
    ],
    [
      'run_script with templated allowed_domains writes',
      step('run_script', { code: 'return 1', allowed_domains: '{{$trigger.body.hosts}}' }),
      'writes',
    ],
    ['render_lens_template without saveToR2 reads', step('render_lens_template', { templateId: 'l' }), 'reads'],
    [
      'render_lens_template saving writes',
      step('render_lens_template', { templateId: 'l', saveToR2: true, r2Key: 'a.csv' }),
      'writes',
    ],
    [
      'render_lens_template with a templated saveToR2 writes',
      step('render_lens_template', { templateId: 'l', saveToR2: '{{$trigger.body.save}}', r2Key: 'a.csv' }),
      'writes',
    ],
    ['s3_action get reads', step('s3_action', { connectionId: 'c', action: 'get', key: 'k' }), 'reads'],
    ['s3_action put writes', step('s3_action', { connectionId: 'c', action: 'put', key: 'k', content: 'x' }), 'writes'],
    ['send_notification writes', step('send_notification', { title: 't', message: 'm' }), 'writes'],
  ])('%s', (_name, node, effects) => {
    expect(registry.effectsOf(node)).toBe(effects)
  })

  it("never says more than the definition's effects, and effectsWhen comes with its note", () => {
    const rank = { none: 0, reads: 1, writes: 2 } as const
    for (const definition of registry.list()) {
      expect(definition.effectsWhen === undefined, definition.type).toBe(definition.effectsNote === undefined)
      expect(rank[registry.effectsOf({ type: definition.type, config: {} })], definition.type).toBeLessThanOrEqual(
        rank[definition.effects],
      )
    }
  })
})

describe('registry.needsOf: the rights the steps need, nested steps included', () => {
  it('maps each data operation to its collection action', () => {
    const needs = registry.needsOf([
      step('crud_create', { collection: 'notes', data: { title: 'x' } }, 'a'),
      step('crud_read', { collection: 'notes' }, 'b'),
      step('crud_update', { collection: 'notes', id: '1', data: {} }, 'c'),
      step('crud_delete', { collection: 'notes', id: '1', permanent: true }, 'd'),
      step('crud_query', { collection: 'orders' }, 'e'),
      step('crud_action', { collection: 'tasks', action: 'query' }, 'f'),
      step('crud_action', { collection: 'tasks', action: 'create', data: {} }, 'g'),
    ])
    expect(needs.map((n) => [n.step, n.need])).toEqual([
      ['a', { collection: 'notes', action: 'create' }],
      ['b', { collection: 'notes', action: 'read' }],
      ['c', { collection: 'notes', action: 'update' }],
      ['d', { collection: 'notes', action: 'delete' }],
      ['e', { collection: 'orders', action: 'read' }],
      ['f', { collection: 'tasks', action: 'read' }],
      ['g', { collection: 'tasks', action: 'create' }],
    ])
  })

  it('names system resources: files, lenses, storage connections, search indexes, sub-flows, saved scripts', () => {
    const needs = registry.needsOf([
      step('file_read', { key: 'k' }, 'read'),
      step('file_upload', { key: 'k', content: 'x' }, 'up'),
      step('render_lens_template', { templateId: 'l', saveToR2: true, r2Key: 'a.csv' }, 'lens'),
      step('render_lens_template', { templateId: 'l' }, 'lens2'),
      step('s3_action', { connectionId: 'c', action: 'delete', key: 'k' }, 's3'),
      step('build_search_index', { indexName: 'i' }, 'index'),
      step('trigger_flow', { flowId: 'f' }, 'sub'),
      step('run_script', { scriptId: 'x' }, 'saved'),
      step('run_script', { code: 'return 1' }, 'inline'),
      step('send_notification', { title: 't', message: 'm' }, 'tell'),
    ])
    expect(needs.map((n) => `${n.step} ${'resource' in n.need ? n.need.resource : ''}:${n.need.action}`)).toEqual([
      'read system/files:read',
      'up system/files:create',
      'lens system/lenses:read',
      'lens system/files:create',
      'lens2 system/lenses:read',
      's3 system/storage-connections:update',
      'index system/search-indexes:execute',
      'sub system/automate:execute',
      'saved system/automate:read',
    ])
  })

  it('walks loop bodies, condition branches and switch cases; a templated collection is unknown ahead and not listed', () => {
    const needs = registry.needsOf([
      step(
        'loop',
        {
          items: '{{$trigger.body.items}}',
          operations: [step('crud_create', { collection: 'lines', data: {} }, 'inLoop')],
        },
        'each',
      ),
      step(
        'condition',
        {
          rules: { field: '$trigger.body.n', operator: 'gt', value: 1 },
          then: [step('crud_update', { collection: 'big', id: '1', data: {} }, 'yes')],
          else: [step('crud_delete', { collection: 'small', id: '1' }, 'no')],
        },
        'check',
      ),
      step(
        'switch',
        {
          value: '{{$trigger.body.k}}',
          cases: [{ match: 'a', steps: [step('crud_read', { collection: 'a' }, 'caseA')] }],
          default: [step('crud_read', { collection: 'z' }, 'other')],
        },
        'pick',
      ),
      step('crud_create', { collection: '{{$trigger.body.where}}', data: {} }, 'anywhere'),
      step('crud_create', { collection: 'notes', data: [{}, {}] }, 'twice'),
    ])
    expect(needs.map((n) => `${n.step} ${'collection' in n.need ? n.need.collection : ''}:${n.need.action}`)).toEqual([
      'inLoop lines:create',
      'yes big:update',
      'no small:delete',
      'caseA a:read',
      'other z:read',
      'twice notes:create',
    ])
  })
})

describe('literal values', () => {
  it('a template is unknown ahead', () => {
    expect(literalText(' notes ')).toBe('notes')
    expect(literalText('{{$trigger.body.c}}')).toBeNull()
    expect(literalText('')).toBeNull()
    expect(literalText(3)).toBeNull()
    expect([
      literalFlag(undefined),
      literalFlag(false),
      literalFlag('false'),
      literalFlag(true),
      literalFlag('true'),
      literalFlag('{{x}}'),
    ]).toEqual([false, false, false, true, true, null])
  })
})
