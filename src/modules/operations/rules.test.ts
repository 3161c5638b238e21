import { describe, expect, it } from 'vitest'
import { evaluateRule, evaluateRuleTree, parseRule, type RuleNode } from './rules.js'
import { StepError } from './types.js'

const data = {
  $trigger: {
    event: 'record.create',
    body: {
      status: 'paid',
      total: 42,
      price: '9.50',
      tags: ['a', 'b'],
      none: null,
      empty: '',
      list: [],
      obj: {},
      flag: true,
      when: '2026-03-01T10:00:00Z',
      text: 'Hello World',
    },
  },
  $steps: { calc: { result: 10 } },
  $user: { id: 'u1', email: 'u@example.com' },
}

function parsed(tree: unknown): RuleNode {
  const result = parseRule(tree)
  if (!result.ok) throw new Error(JSON.stringify(result.issues))
  return result.rule
}
const leaf = (field: string, operator: string, value?: unknown, extra: Record<string, unknown> = {}) => ({
  field,
  operator,
  ...(value === undefined ? {} : { value }),
  ...extra,
})

describe('evaluateRule: each operator', () => {
  const rows: [string, Record<string, unknown>, boolean][] = [
    ['eq string', leaf('$trigger.body.status', 'eq', 'paid'), true],
    ['eq string (no)', leaf('$trigger.body.status', 'eq', 'open'), false],
    ['eq number with numeric string', leaf('$trigger.body.total', 'eq', '42'), true],
    ['eq numeric string with number', leaf('$trigger.body.price', 'eq', 9.5), true],
    ['eq two numeric strings compare as text', leaf('$trigger.body.price', 'eq', '9.5'), false],
    ['eq boolean with its spelling', leaf('$trigger.body.flag', 'eq', 'true'), true],
    ['eq null', leaf('$trigger.body.none', 'eq', null), true],
    ['eq missing field is null', leaf('$trigger.body.nothing', 'eq', null), true],
    ['eq array structurally', leaf('$trigger.body.tags', 'eq', ['a', 'b']), true],
    ['neq', leaf('$trigger.body.status', 'neq', 'open'), true],
    ['neq (no)', leaf('$trigger.body.status', 'neq', 'paid'), false],
    ['gt numbers', leaf('$trigger.body.total', 'gt', 41), true],
    ['gt numeric string', leaf('$trigger.body.price', 'gt', '10'), false],
    ['gt numeric strings compare as numbers', leaf('$trigger.body.price', 'gt', '9.25'), true],
    ['gte equal', leaf('$trigger.body.total', 'gte', 42), true],
    ['lt ISO dates as text', leaf('$trigger.body.when', 'lt', '2026-04-01'), true],
    ['lte', leaf('$trigger.body.total', 'lte', 41), false],
    ['gt against null is false', leaf('$trigger.body.none', 'gt', 0), false],
    ['lt number against a word is false', leaf('$trigger.body.total', 'lt', 'abc'), false],
    ['in', leaf('$trigger.body.status', 'in', ['open', 'paid']), true],
    ['in (no)', leaf('$trigger.body.status', 'in', ['open']), false],
    ['in numbers and numeric strings', leaf('$trigger.body.total', 'in', ['42']), true],
    ['nin', leaf('$trigger.body.status', 'nin', ['open']), true],
    ['nin (no)', leaf('$trigger.body.status', 'nin', ['paid']), false],
    ['contains text', leaf('$trigger.body.text', 'contains', 'lo Wo'), true],
    ['contains is case-sensitive', leaf('$trigger.body.text', 'contains', 'world'), false],
    ['contains an array element', leaf('$trigger.body.tags', 'contains', 'b'), true],
    ['contains on null', leaf('$trigger.body.none', 'contains', 'x'), false],
    ['starts_with', leaf('$trigger.body.text', 'starts_with', 'Hello'), true],
    ['starts_with a number', leaf('$trigger.body.total', 'starts_with', '4'), true],
    ['ends_with', leaf('$trigger.body.text', 'ends_with', 'World'), true],
    ['ends_with (no)', leaf('$trigger.body.text', 'ends_with', 'Hello'), false],
    ['is_null on null', leaf('$trigger.body.none', 'is_null'), true],
    ['is_null on missing', leaf('$trigger.body.nothing', 'is_null'), true],
    ['is_null on a value', leaf('$trigger.body.status', 'is_null'), false],
    ['is_null false negates', leaf('$trigger.body.status', 'is_null', false), true],
    ['is_empty on empty text', leaf('$trigger.body.empty', 'is_empty'), true],
    ['is_empty on empty list', leaf('$trigger.body.list', 'is_empty'), true],
    ['is_empty on empty object', leaf('$trigger.body.obj', 'is_empty'), true],
    ['is_empty on null', leaf('$trigger.body.none', 'is_empty'), true],
    ['is_empty on a value', leaf('$trigger.body.tags', 'is_empty'), false],
    ['is_empty false negates', leaf('$trigger.body.tags', 'is_empty', false), true],
    ['matches', leaf('$trigger.body.text', 'matches', '^hello\\s\\w+$', { flags: 'i' }), true],
    ['matches (no, case)', leaf('$trigger.body.text', 'matches', '^hello'), false],
    ['matches a number as text', leaf('$trigger.body.total', 'matches', '^\\d+$'), true],
    ['matches on null', leaf('$trigger.body.none', 'matches', '.*'), false],
    ['field from a template path', leaf('{{$steps.calc.result}}', 'eq', 10), true],
    ['value from a template', leaf('$trigger.body.total', 'gt', '{{$steps.calc.result}}'), true],
    ['value list with templates', leaf('$user.id', 'in', ['{{$user.id}}', 'x']), true],
    ['in-string template field', leaf('{{$trigger.event}}:{{$trigger.body.status}}', 'eq', 'record.create:paid'), true],
    ['unresolved template field is null', leaf('{{$trigger.body.nothing}}', 'is_null'), true],
    ['array index path', leaf('$trigger.body.tags[1]', 'eq', 'b'), true],
  ]
  it.each(rows)('%s', (_name, tree, want) => {
    expect(evaluateRule(parsed(tree), data)).toBe(want)
  })
})

describe('evaluateRule: groups', () => {
  const yes = leaf('$trigger.body.status', 'eq', 'paid')
  const no = leaf('$trigger.body.status', 'eq', 'open')
  const rows: [string, unknown, boolean][] = [
    ['_and all true', { _and: [yes, yes] }, true],
    ['_and one false', { _and: [yes, no] }, false],
    ['_or one true', { _or: [no, yes] }, true],
    ['_or all false', { _or: [no, no] }, false],
    ['nested', { _and: [yes, { _or: [no, { _and: [yes] }] }] }, true],
    ['empty _and holds', { _and: [] }, true],
    ['empty _or does not', { _or: [] }, false],
  ]
  it.each(rows)('%s', (_name, tree, want) => {
    expect(evaluateRule(parsed(tree), data)).toBe(want)
  })
})

describe('parseRule: refusals, with their paths', () => {
  const rows: [string, unknown, string, RegExp][] = [
    ['not an object', 'eq', '', /must be an object/],
    ['an array', [], '', /must be an object/],
    ['unknown operator', leaf('$trigger.body.a', 'like', 'x'), 'operator', /must be one of/],
    ['missing operator', { field: '$trigger.body.a', value: 1 }, 'operator', /must be one of/],
    ['missing value', leaf('$trigger.body.a', 'eq'), 'value', /eq needs a value/],
    ['unknown key', { ...leaf('$trigger.body.a', 'eq', 1), vlaue: 2 }, 'vlaue', /unknown key/],
    ['group with extra keys', { _and: [], field: 'x' }, '', /a group holds only _and/],
    ['group not an array', { _or: {} }, '_or', /array of rules/],
    [
      'nested path',
      { _and: [leaf('$trigger.body.a', 'eq', 1), { _or: [leaf('$trigger.body.b', 'bad', 1)] }] },
      '_and.1._or.0.operator',
      /must be one of/,
    ],
    ['field not a path', leaf('a b', 'eq', 1), 'field', /not a template path/],
    ['field an expression without braces', leaf('= 1 + 1', 'eq', 1), 'field', /not a template path/],
    ['field with an unknown root', leaf('$env.SECRET', 'eq', 1), 'field', /\$env is not available/],
    ['field empty', leaf('', 'eq', 1), 'field', /template path/],
    ['field prototype key', leaf('$trigger.__proto__', 'eq', 1), 'field', /not a template path/],
    ['field bad template', leaf('{{$trigger.body', 'eq', 1), 'field', /never closed/],
    [
      'value with an unknown root',
      leaf('$trigger.body.a', 'eq', '{{$secrets.x}}'),
      'value',
      /\$secrets is not available/,
    ],
    ['in without a list', leaf('$trigger.body.a', 'in', 'x'), 'value', /needs an array/],
    ['is_null with a non-boolean', leaf('$trigger.body.a', 'is_null', 'yes'), 'value', /true \(the default\) or false/],
    ['matches with a number', leaf('$trigger.body.a', 'matches', 5), 'value', /regular expression as a string/],
    ['matches with a backreference', leaf('$trigger.body.a', 'matches', '^(a)\\1$'), 'value', /backreferences/],
    ['matches with a lookahead', leaf('$trigger.body.a', 'matches', '^(?=a)'), 'value', /lookahead or lookbehind/],
    ['matches that does not compile', leaf('$trigger.body.a', 'matches', '(('), 'value', /does not compile/],
    ['matches with flag g', leaf('$trigger.body.a', 'matches', 'a', { flags: 'g' }), 'value', /flags/],
    ['flags on another operator', leaf('$trigger.body.a', 'eq', 'a', { flags: 'i' }), 'flags', /belong to matches/],
    [
      'too deep',
      JSON.parse('{"_and":['.repeat(11) + ']}'.repeat(11)),
      '_and.0._and.0._and.0._and.0._and.0._and.0._and.0._and.0._and.0._and.0',
      /nest at most 10/,
    ],
    [
      'too many comparisons',
      { _or: Array.from({ length: 101 }, () => leaf('$trigger.body.a', 'eq', 1)) },
      '_or.100',
      /at most 100 comparisons/,
    ],
  ]
  it.each(rows)('%s', (_name, tree, path, message) => {
    const result = parseRule(tree)
    expect(result.ok).toBe(false)
    if (result.ok) return
    const issue = result.issues.find((i) => i.path.join('.') === path)
    expect(issue, JSON.stringify(result.issues)).toBeDefined()
    expect(issue!.message).toMatch(message)
  })

  it('a templated pattern is checked when it runs', async () => {
    const tree = leaf('$trigger.body.text', 'matches', '{{$trigger.body.pattern}}')
    expect(parseRule(tree).ok).toBe(true)
    const run = evaluateRuleTree(tree, { $trigger: { body: { text: 'aaaa', pattern: '(a)\\1' } } })
    await expect(run).rejects.toThrow(StepError)
    await expect(run).rejects.toMatchObject({
      code: 'condition_failed',
      retryable: false,
      message: expect.stringMatching(/backreferences/),
    })
    // The shapes a backtracking engine took exponential time on run in linear time (RE2, decision 057).
    const hostile = { $trigger: { body: { text: `${'a'.repeat(50_000)}!`, pattern: '^(a+)+$' } } }
    await expect(evaluateRuleTree(tree, hostile)).resolves.toBe(false)
  })
  it('a templated in value that is no list fails the condition', async () => {
    await expect(
      evaluateRuleTree(leaf('$trigger.body.a', 'in', '{{$trigger.body.a}}'), { $trigger: { body: { a: 'x' } } }),
    ).rejects.toMatchObject({ code: 'condition_failed' })
  })
})

describe('evaluateRuleTree', () => {
  it('evaluates {{= }} JSONata in fields and values', async () => {
    const tree = {
      _and: [leaf('{{= $count($trigger.body.tags) }}', 'eq', 2), leaf('$trigger.body.total', 'eq', '{{= 40 + 2 }}')],
    }
    expect(await evaluateRuleTree(tree, data)).toBe(true)
  })
  it('refuses a tree that does not parse with invalid_condition, naming the path', async () => {
    await expect(
      evaluateRuleTree({ _and: [{ field: '$trigger.body.a', operator: 'nope' }] }, data),
    ).rejects.toMatchObject({
      code: 'invalid_condition',
      message: expect.stringContaining('_and[0].operator'),
      retryable: false,
    })
  })
  it('a failing expression makes its side null, not an error', async () => {
    expect(await evaluateRuleTree(leaf('{{= $nothing( }}', 'is_null'), data)).toBe(true)
  })
  it('refuses a tree whose templates name a large value so often that the copies would pass 20,000,000 characters', async () => {
    const large = { $steps: { read: { content: 'x'.repeat(1_000_000) } } }
    const tree = leaf(
      '$steps.read.content',
      'in',
      Array.from({ length: 30 }, () => '{{$steps.read.content}}'),
    )
    await expect(evaluateRuleTree(tree, large)).rejects.toMatchObject({
      code: 'condition_failed',
      message: expect.stringContaining('more than 20000000 characters in all'),
    })
    expect(await evaluateRuleTree(leaf('$steps.read.content', 'in', ['{{$steps.read.content}}']), large)).toBe(true)
  })
})
