import { describe, expect, it } from 'vitest'
import { createOperationRegistry } from '../registry.js'
import { testContext } from '../test-context.js'
import { StepError } from '../types.js'
import { maxParts, maxTextLength, textFormat } from './text-format.js'

const run = async (template: unknown, operations: unknown[] = []) =>
  (
    (await textFormat.run(textFormat.configSchema.parse({ template, operations }), testContext().ctx)) as {
      result: unknown
    }
  ).result
const safe = (operations: unknown[], template: unknown = 'x') =>
  textFormat.configSchema.safeParse({ template, operations }).success

describe('text_format: operations', () => {
  it.each([
    ['the template alone', 'Hello', [], 'Hello'],
    ['a number from a whole-value template', 42, [], '42'],
    ['concat', 'a', [{ type: 'concat', values: ['b', 'c'], separator: '-' }], 'a-b-c'],
    [
      'split, then concat joins',
      'a, b ,c',
      [{ type: 'split', separator: ',' }, { type: 'trim' }, { type: 'concat', separator: '|' }],
      'a|b|c',
    ],
    ['split into a list', 'a,b,c', [{ type: 'split' }], ['a', 'b', 'c']],
    ['split with a limit', 'a,b,c', [{ type: 'split', limit: 2 }], ['a', 'b']],
    ['split into characters', 'abc', [{ type: 'split', separator: '' }], ['a', 'b', 'c']],
    ['replace every occurrence, literally', 'a.b.c', [{ type: 'replace', search: '.', replacement: '$&' }], 'a$&b$&c'],
    ['replace the first only', 'a.b.c', [{ type: 'replace', search: '.', replacement: '/', all: false }], 'a/b.c'],
    [
      'replace all from a template spelling',
      'aXa',
      [{ type: 'replace', search: 'a', replacement: 'b', all: 'false' }],
      'bXa',
    ],
    [
      'regex_replace with groups, global by default',
      '2026-01-31 and 2025-12-01',
      [{ type: 'regex_replace', pattern: '(\\d{4})-(\\d{2})-(\\d{2})', replacement: '$3/$2/$1' }],
      '31/01/2026 and 01/12/2025',
    ],
    [
      'regex_replace once, case-insensitive',
      'Cat cat',
      [{ type: 'regex_replace', pattern: 'cat', flags: 'i', replacement: 'dog' }],
      'dog cat',
    ],
    ['trim both sides', '  a  ', [{ type: 'trim' }], 'a'],
    ['trim the start', '  a  ', [{ type: 'trim', side: 'start' }], 'a  '],
    ['trim the end', '  a  ', [{ type: 'trim', side: 'end' }], '  a'],
    ['uppercase', 'straße', [{ type: 'uppercase' }], 'STRASSE'],
    ['lowercase', 'ÄB', [{ type: 'lowercase' }], 'äb'],
    ['substring', 'abcdef', [{ type: 'substring', start: 1, end: 3 }], 'bc'],
    ['substring from the end', 'abcdef', [{ type: 'substring', start: -2 }], 'ef'],
    ['substring by characters, not code units', '😀a😀b', [{ type: 'substring', start: 1, end: 3 }], 'a😀'],
    ['pad the start', '7', [{ type: 'pad', length: 3, fill: '0' }], '007'],
    ['pad the end', 'ab', [{ type: 'pad', length: 5, fill: '.', side: 'end' }], 'ab...'],
    ['pad shorter than the text: unchanged', 'abcd', [{ type: 'pad', length: 2 }], 'abcd'],
    [
      'text operations apply to each part after a split',
      'a-b',
      [{ type: 'split', separator: '-' }, { type: 'uppercase' }, { type: 'pad', length: 2, fill: '_' }],
      ['_A', '_B'],
    ],
  ])('%s', async (_name, template, operations, result) => {
    expect(await run(template, operations)).toEqual(result)
  })

  it('fails with text_format_failed: a split of a list, too many parts, a result too long, a regex on too long a text', async () => {
    const failures: [unknown, unknown[], RegExp][] = [
      ['a,b', [{ type: 'split' }, { type: 'split' }], /operations\[1\] \(split\): the value is already a list/],
      [','.repeat(maxParts), [{ type: 'split' }], /more than 10000 parts/],
      [
        'x'.repeat(600_000),
        [
          { type: 'concat', values: ['x'.repeat(100_000)], separator: 'x'.repeat(1000) },
          {
            type: 'concat',
            values: ['x'.repeat(100_000), 'x'.repeat(100_000), 'x'.repeat(100_000), 'x'.repeat(100_000)],
          },
        ],
        /longer than 1000000 characters/,
      ],
      [
        'a'.repeat(100_001),
        [{ type: 'regex_replace', pattern: 'a', replacement: 'b' }],
        /longer than 100000 characters/,
      ],
    ]
    for (const [template, operations, message] of failures) {
      const attempt = run(template, operations)
      await expect(attempt).rejects.toBeInstanceOf(StepError)
      await expect(attempt).rejects.toMatchObject({
        code: 'text_format_failed',
        retryable: false,
        message: expect.stringMatching(message),
      })
    }
  })

  it('refuses before building what one operation would make far past the bound (a copy per match, per part)', async () => {
    const amplifiers: [string, unknown[], string][] = [
      // 400,000,000 characters from a megabyte of text: built in one call, then found too long.
      [
        'a'.repeat(1_000_000),
        [{ type: 'replace', search: 'a', replacement: 'b'.repeat(400) }],
        'operations[0] (replace)',
      ],
      [
        Array.from({ length: maxParts }, () => 'x').join(','),
        [{ type: 'split' }, { type: 'pad', length: 10_000 }],
        'operations[1] (pad)',
      ],
      // `$'` (the text after the match) 50,000 times per match: the engine's list of parts froze the process
      // for seconds (2,000 characters) or ended it (20,000: automate-evaluator API test).
      [
        'a'.repeat(2000),
        [{ type: 'regex_replace', pattern: 'a', replacement: "$'".repeat(50_000) }],
        'operations[0] (regex_replace)',
      ],
    ]
    for (const [template, operations, where] of amplifiers) {
      await expect(run(template, operations)).rejects.toMatchObject({
        code: 'text_format_failed',
        message: expect.stringContaining(`${where}: the result would be longer than 1000000 characters`),
      })
    }
  })

  it('a pattern that took a backtracking engine exponential time runs in linear time (RE2)', async () => {
    await expect(
      run(`${'a'.repeat(30_000)}b`, [{ type: 'regex_replace', pattern: '(a+)+c|a*a*a*a*a*c', replacement: '' }]),
    ).resolves.toBe(`${'a'.repeat(30_000)}b`)
  })
  it('a pattern too large for its text fails with the work bound', async () => {
    await expect(
      run('a'.repeat(30_000), [{ type: 'regex_replace', pattern: '[a-z]{990}!', replacement: '' }]),
    ).rejects.toMatchObject({ code: 'text_format_failed', message: expect.stringMatching(/too large for a text/) })
  })
})

describe('text_format: config', () => {
  it('template defaults to empty text and is at most 1000000 characters; 0-50 operations', () => {
    expect(textFormat.configSchema.parse({})).toEqual({ template: '', operations: [] })
    expect(safe([], 'x'.repeat(maxTextLength))).toBe(true)
    expect(safe([], 'x'.repeat(maxTextLength + 1))).toBe(false)
    expect(safe(new Array(50).fill({ type: 'trim' }))).toBe(true)
    expect(safe(new Array(51).fill({ type: 'trim' }))).toBe(false)
    expect(safe([{ type: 'reverse' }])).toBe(false)
  })
  it('bounds of each operation', () => {
    for (const [operation, ok] of [
      [{ type: 'split', limit: 0 }, false],
      [{ type: 'split', limit: 1 }, true],
      [{ type: 'split', limit: maxParts }, true],
      [{ type: 'split', limit: maxParts + 1 }, false],
      [{ type: 'pad', length: -1 }, false],
      [{ type: 'pad', length: 0 }, true],
      [{ type: 'pad', length: 10_000 }, true],
      [{ type: 'pad', length: 10_001 }, false],
      [{ type: 'pad' }, false],
      [{ type: 'pad', length: 3, fill: '' }, false],
      [{ type: 'pad', length: 3, fill: 'x'.repeat(100) }, true],
      [{ type: 'pad', length: 3, fill: 'x'.repeat(101) }, false],
      [{ type: 'replace', search: '' }, false],
      [{ type: 'replace', search: 'a' }, true],
      [{ type: 'replace', search: 'x'.repeat(10_001) }, false],
      [{ type: 'concat', values: new Array(100).fill('a') }, true],
      [{ type: 'concat', values: new Array(101).fill('a') }, false],
      [{ type: 'substring', start: -maxTextLength }, true],
      [{ type: 'substring', start: -maxTextLength - 1 }, false],
      [{ type: 'substring', end: maxTextLength + 1 }, false],
      [{ type: 'regex_replace', pattern: 'a'.repeat(500) }, true],
      [{ type: 'regex_replace', pattern: 'a'.repeat(501) }, false],
      [{ type: 'regex_replace', pattern: '(a+)+$' }, true],
      [{ type: 'regex_replace', pattern: '(?<=a)b' }, false],
      [{ type: 'regex_replace', pattern: '(a)\\1' }, false],
      [{ type: 'regex_replace', pattern: '[' }, false],
      [{ type: 'regex_replace', pattern: 'a', flags: 'gy' }, false],
      [{ type: 'regex_replace', pattern: 'a', flags: 'gimsu' }, true],
      [{ type: 'trim', side: 'middle' }, false],
      [{ type: 'uppercase', locale: 'tr' }, false],
    ] as const)
      expect(safe([operation]), JSON.stringify(operation).slice(0, 80)).toBe(ok)
  })
  it('refuses an exponential pattern when the flow is saved; a templated one is checked when it runs', async () => {
    const registry = createOperationRegistry()
    const step = (pattern: string) => [
      {
        key: 't',
        type: 'text_format',
        config: {
          template: '{{$trigger.body.text}}',
          operations: [{ type: 'regex_replace', pattern, replacement: '' }],
        },
      },
    ]
    expect(() => registry.checkSteps(step('(\\w)\\1'))).toThrow(/backreferences/)
    expect(() => registry.checkSteps(step('{{$trigger.body.pattern}}'))).not.toThrow()
    const prepared = registry.prepare(step('{{$trigger.body.pattern}}')[0]!, {
      $trigger: { body: { text: 'x', pattern: '(?!a)' } },
    })
    await expect(prepared).rejects.toMatchObject({
      code: 'invalid_config',
      message: expect.stringMatching(/lookahead or lookbehind/),
    })
  })
})
