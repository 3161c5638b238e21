import { describe, expect, it } from 'vitest'
import type { UnresolvedReason } from './lookup.js'
import { createTemplateBudget } from './budget.js'
import { renderTemplateText, resolveTemplate } from './resolve.js'

// A flow's context, as the spec's template variables name it.
const context = {
  $trigger: {
    event: 'record.create',
    collection: 'tasks',
    method: 'POST',
    body: {
      title: 'Hello',
      count: 3,
      ratio: 0.5,
      done: false,
      none: null,
      empty: '',
      tags: ['a', 'b'],
      items: [{ name: 'x', sizes: [10, 20] }],
      nested: { deep: { v: 1 } },
      'first-name': 'Ann',
      'a b': 'spaced',
      '0': 'zero key',
    },
  },
  $steps: {
    fetch: { status: 200, body: { ok: true } },
    script: { output: { total: 5 } },
    loop: { item: { id: 'i1' }, index: 2 },
  },
  $user: { id: 'u1', email: 'ann@example.com' },
  $flow: { id: 'f1' },
  $run: { id: 'r1' },
  $now: '2025-01-02T03:04:05.000Z',
}

const cases: { name: string; template: string; value: unknown; reasons?: UnresolvedReason[] }[] = [
  // The spec's variables
  { name: '$trigger.body.fieldName', template: '{{$trigger.body.title}}', value: 'Hello' },
  { name: '$trigger.event', template: '{{$trigger.event}}', value: 'record.create' },
  { name: '$trigger.collection', template: '{{ $trigger.collection }}', value: 'tasks' },
  { name: '$trigger.method', template: '{{$trigger.method}}', value: 'POST' },
  { name: '$steps.key.field', template: '{{$steps.fetch.status}}', value: 200 },
  { name: 'run_script output', template: '{{$steps.script.output.total}}', value: 5 },
  { name: 'loop item and index', template: '{{$steps.loop.item.id}}#{{$steps.loop.index}}', value: 'i1#2' },
  { name: '$user.id, $user.email', template: '{{$user.id}} <{{$user.email}}>', value: 'u1 <ann@example.com>' },
  { name: '$flow.id, $run.id', template: '{{$flow.id}}/{{$run.id}}', value: 'f1/r1' },
  { name: '$now', template: '{{$now}}', value: '2025-01-02T03:04:05.000Z' },
  // Whole value keeps its type
  { name: 'whole: object', template: '{{$trigger.body.nested}}', value: { deep: { v: 1 } } },
  { name: 'whole: array', template: '{{$trigger.body.tags}}', value: ['a', 'b'] },
  { name: 'whole: number', template: '{{$trigger.body.count}}', value: 3 },
  { name: 'whole: boolean', template: '{{$trigger.body.done}}', value: false },
  { name: 'whole: null', template: '{{$trigger.body.none}}', value: null },
  { name: 'whole: empty string', template: '{{$trigger.body.empty}}', value: '' },
  // In-string stringifies
  { name: 'in-string: object as JSON', template: 'n={{$trigger.body.nested}}', value: 'n={"deep":{"v":1}}' },
  { name: 'in-string: array as JSON', template: 'tags: {{$trigger.body.tags}}', value: 'tags: ["a","b"]' },
  {
    name: 'in-string: number',
    template: '{{$trigger.body.count}} items, ratio {{$trigger.body.ratio}}',
    value: '3 items, ratio 0.5',
  },
  { name: 'in-string: boolean', template: 'done={{$trigger.body.done}}', value: 'done=false' },
  { name: 'in-string: null is empty', template: '[{{$trigger.body.none}}]', value: '[]' },
  { name: 'a space around one tag makes it in-string', template: ' {{$trigger.body.count}}', value: ' 3' },
  // Paths
  { name: 'bracket index', template: '{{$trigger.body.items[0].name}}', value: 'x' },
  { name: 'dot index', template: '{{$trigger.body.items.0.sizes.1}}', value: 20 },
  { name: 'mixed indexes', template: '{{$trigger.body.items[0].sizes[1]}}', value: 20 },
  { name: 'hyphenated key', template: '{{$trigger.body.first-name}}', value: 'Ann' },
  { name: 'quoted key', template: `{{$trigger.body["a b"]}}`, value: 'spaced' },
  { name: 'digit key on an object', template: '{{$trigger.body.0}}', value: 'zero key' },
  { name: 'text only', template: 'no tags here', value: 'no tags here' },
  {
    name: 'escaped tag is text',
    template: 'literal \\{{$user.id}} and {{$user.id}}',
    value: 'literal {{$user.id}} and u1',
  },
  // Unresolvable: the empty value and the reason
  { name: 'unknown root', template: '{{$env.SECRET}}', value: '', reasons: ['unknown_root'] },
  { name: 'missing key', template: '{{$trigger.body.nope}}', value: '', reasons: ['missing_key'] },
  { name: 'missing key in-string', template: 'Hi {{$trigger.body.nope}}!', value: 'Hi !', reasons: ['missing_key'] },
  { name: 'index out of range', template: '{{$trigger.body.tags[5]}}', value: '', reasons: ['index_out_of_range'] },
  { name: 'dot index out of range', template: '{{$trigger.body.tags.2}}', value: '', reasons: ['index_out_of_range'] },
  { name: 'key under a string', template: '{{$trigger.body.title.length}}', value: '', reasons: ['not_an_object'] },
  { name: 'key under null', template: '{{$trigger.body.none.x}}', value: '', reasons: ['not_an_object'] },
  { name: 'key under a number', template: '{{$trigger.body.count.x}}', value: '', reasons: ['not_an_object'] },
  { name: 'named key on an array', template: '{{$trigger.body.tags.length}}', value: '', reasons: ['not_an_object'] },
  { name: 'index on an object', template: '{{$trigger.body.nested[0]}}', value: '', reasons: ['not_an_array'] },
  { name: 'index on a string', template: '{{$trigger.body.title[0]}}', value: '', reasons: ['not_an_array'] },
  { name: 'inherited name', template: '{{$trigger.body.toString}}', value: '', reasons: ['missing_key'] },
  { name: 'inherited name on the context', template: '{{hasOwnProperty}}', value: '', reasons: ['unknown_root'] },
  {
    name: 'several misses, each reported',
    template: '{{a}}-{{$user.id}}-{{b.c}}',
    value: '-u1-',
    reasons: ['unknown_root', 'unknown_root'],
  },
  { name: 'a template that does not parse', template: 'Hi {{ name', value: '', reasons: ['invalid_template'] },
  {
    name: 'a forbidden key does not parse',
    template: '{{$trigger.body.__proto__}}',
    value: '',
    reasons: ['invalid_template'],
  },
  { name: 'expression without an evaluator', template: '{{= 1 + 1 }}', value: '', reasons: ['expression_unavailable'] },
]

describe('resolveTemplate', () => {
  it.each(cases)('$name', ({ template, value, reasons = [] }) => {
    const result = resolveTemplate(template, context)
    expect(result.value).toEqual(value)
    expect(result.unresolved.map((u) => u.reason)).toEqual(reasons)
    for (const miss of result.unresolved) expect(miss.message.length).toBeGreaterThan(0)
  })

  it('names the tag, its offset and what was wrong', () => {
    const { unresolved } = resolveTemplate('Hi {{ $trigger.body.items[0].nope }}', context)
    expect(unresolved).toEqual([
      {
        tag: '{{ $trigger.body.items[0].nope }}',
        position: 3,
        reason: 'missing_key',
        message: '{{ $trigger.body.items[0].nope }}: $trigger.body.items[0] has no "nope"',
      },
    ])
  })

  it('hands out copies: changing a resolved object changes nothing in the context', () => {
    const { value } = resolveTemplate('{{$trigger.body.items}}', context)
    ;(value as { name: string }[])[0]!.name = 'changed'
    expect(context.$trigger.body.items[0]!.name).toBe('x')
  })
})

describe('resolveTemplate over hostile data', () => {
  it('never calls a getter', () => {
    let called = 0
    const data = {
      get secret() {
        called++
        return 'leaked'
      },
    }
    expect(resolveTemplate('{{data.secret}}', { data })).toMatchObject({
      value: '',
      unresolved: [{ reason: 'missing_key' }],
    })
    expect(called).toBe(0)
  })

  it('never reaches a function or a class instance', () => {
    const context = { fn: () => 'ran', nested: { fn: () => 'ran' }, map: new Map([['a', 1]]), date: new Date(0) }
    for (const template of ['{{fn}}', '{{nested.fn}}', 'x{{nested.fn}}', '{{map.size}}', '{{map}}', '{{date}}']) {
      expect(
        resolveTemplate(template, context).unresolved.map((u) => u.reason),
        template,
      ).toEqual(['not_data'])
    }
  })

  it('reads objects without a prototype', () => {
    const body = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 })
    expect(resolveTemplate('{{body.a}}', { body }).value).toBe(1)
  })

  it('reads an own __proto__ key of parsed JSON only through data, never the prototype', () => {
    const body = JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as object
    // The key cannot be written in a template at all.
    expect(resolveTemplate('{{body.__proto__.x}}', { body }).unresolved[0]?.reason).toBe('invalid_template')
    expect(resolveTemplate('{{body.y}}', { body }).value).toBe(2)
  })

  it('a value that cannot be written as JSON is empty, not a crash', () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    expect(resolveTemplate('x{{c}}', { c: cyclic })).toMatchObject({
      value: 'x',
      unresolved: [{ reason: 'not_serialisable' }],
    })
    expect(resolveTemplate('x{{n}}', { n: { big: 1n } })).toMatchObject({
      value: 'x',
      unresolved: [{ reason: 'not_serialisable' }],
    })
  })

  it('refuses to build a string past maxLength', () => {
    const big = 'x'.repeat(1000)
    const template = Array.from({ length: 20 }, () => '{{big}}').join(' ')
    expect(resolveTemplate(template, { big }, { maxLength: 5000 })).toMatchObject({
      value: '',
      unresolved: [{ reason: 'too_long', position: 0 }],
    })
    expect((resolveTemplate(template, { big }, { maxLength: 50_000 }).value as string).length).toBe(20_019)
  })

  it('a context that is not an object resolves nothing', () => {
    for (const context of [null, undefined, 'text', 42, ['a']]) {
      expect(resolveTemplate('{{a}}', context).unresolved.map((u) => u.reason)).toEqual(['unknown_root'])
    }
  })
})

describe('expressions ({{= … }})', () => {
  const evaluate = (code: string, ctx: unknown) => {
    if (code === 'boom') throw new Error('bad expression')
    if (code === 'nothing') return undefined
    if (code === 'fn') return () => 1
    return { code, sees: (ctx as typeof context).$user.id }
  }

  it.each([
    { template: '{{= $count(x) }}', value: { code: '$count(x)', sees: 'u1' }, reasons: [] },
    { template: 'v={{= y }}', value: 'v={"code":"y","sees":"u1"}', reasons: [] },
    { template: '{{= boom }}', value: '', reasons: ['expression_failed'] },
    { template: 'a{{= nothing }}b', value: 'ab', reasons: ['missing_key'] },
    { template: '{{= fn }}', value: '', reasons: ['not_data'] },
  ])('$template', ({ template, value, reasons }) => {
    const result = resolveTemplate(template, context, { evaluate })
    expect(result.value).toEqual(value)
    expect(result.unresolved.map((u) => u.reason)).toEqual(reasons)
  })
})

describe('renderTemplateText (send_email: {{key}} over templateData)', () => {
  const templateData = { name: 'Ann', order: { id: 7, lines: [{ sku: 'A1' }] }, note: null }

  it.each([
    {
      template: 'Dear {{name}}, order {{order.id}} ({{order.lines[0].sku}})',
      text: 'Dear Ann, order 7 (A1)',
      reasons: [],
    },
    { template: '{{order.id}}', text: '7', reasons: [] },
    { template: '{{order.lines}}', text: '[{"sku":"A1"}]', reasons: [] },
    { template: '{{note}}', text: '', reasons: [] },
    { template: '{{missing}}', text: '', reasons: ['unknown_root'] },
  ])('$template', ({ template, text, reasons }) => {
    const result = renderTemplateText(template, templateData)
    expect(result.text).toBe(text)
    expect(result.unresolved.map((u) => u.reason)).toEqual(reasons)
  })
})

describe('a budget shared by the strings of one config', () => {
  const big = {
    $steps: {
      big: { text: 'x'.repeat(100_000), rows: Array.from({ length: 1000 }, (_, i) => ({ i, name: 'n'.repeat(90) })) },
    },
  }
  it('counts what each tag gives (a whole value by its JSON), and refuses the string that would pass it', () => {
    const budget = createTemplateBudget(250_000)
    expect(resolveTemplate('{{$steps.big.text}}', big, { budget }).value).toHaveLength(100_000)
    expect(resolveTemplate('a {{$steps.big.text}}', big, { budget }).value).toHaveLength(100_002)
    expect(budget.left).toBe(250_000 - 100_002 - 100_002)
    const refused = resolveTemplate('{{$steps.big.rows}}', big, { budget })
    expect(refused).toEqual({
      value: '',
      unresolved: [
        expect.objectContaining({
          reason: 'too_long',
          message: expect.stringContaining('more than 250000 characters in all'),
        }),
      ],
    })
    expect(budget.exceeded).toBe(true)
  })
  it('a value named many times is refused once the sum passes, before it is copied each time', () => {
    const budget = createTemplateBudget(1_000_000)
    const results = Array.from({ length: 20 }, () => resolveTemplate('{{$steps.big.text}}', big, { budget }))
    expect(results.filter((r) => r.value !== '')).toHaveLength(9)
    expect(results.at(-1)!.unresolved[0]).toMatchObject({ reason: 'too_long' })
  })
})
