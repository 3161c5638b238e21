import { describe, expect, it } from 'vitest'
import { formatPath, isUnder, mapStrings, templateOnPath, valuesAt, visitStrings } from './config-paths.js'

describe('config paths', () => {
  it('formats like lib/template', () => {
    expect(formatPath(['values', 0, 'a'])).toBe('values[0].a')
    expect(formatPath(['headers', 'X-Key'])).toBe('headers["X-Key"]')
    expect(formatPath([1, 'a'], 'then')).toBe('then[1].a')
    expect(formatPath([], 'operations[0].config')).toBe('operations[0].config')
  })
  it('matches patterns with [] for every element', () => {
    expect(isUnder(['then'], 'then')).toBe(true)
    expect(isUnder(['then', 0, 'config'], 'then')).toBe(true)
    expect(isUnder(['thenx'], 'then')).toBe(false)
    expect(isUnder(['cases', 2, 'steps', 0], 'cases[].steps')).toBe(true)
    expect(isUnder(['cases', 2, 'match'], 'cases[].steps')).toBe(false)
    expect(isUnder(['cases', 'x', 'steps'], 'cases[].steps')).toBe(false)
  })
  it('finds the values a pattern names', () => {
    const config = { cases: [{ steps: [1] }, { match: 'x' }, { steps: [2] }], then: [] }
    expect(valuesAt(config, 'cases[].steps')).toEqual([
      { path: ['cases', 0, 'steps'], value: [1] },
      { path: ['cases', 2, 'steps'], value: [2] },
    ])
    expect(valuesAt(config, 'else')).toEqual([])
    expect(valuesAt({ toString: 1 }, 'constructor')).toEqual([])
  })
  it('tells whether a template stands at or above a path', () => {
    const config = { values: '{{$trigger.body.list}}', n: 'x', list: [1, '{{$a}}'] }
    expect(templateOnPath(config, ['values'])).toBe(true)
    expect(templateOnPath(config, ['values', 0])).toBe(true)
    expect(templateOnPath(config, ['n'])).toBe(false)
    expect(templateOnPath(config, ['list', 1])).toBe(true)
    expect(templateOnPath(config, ['list', 0])).toBe(false)
    expect(templateOnPath(config, ['missing'])).toBe(false)
  })
  it('maps and visits strings outside the skipped paths', () => {
    const config = { a: 'x', rules: { field: 'y' }, list: ['z', 1] }
    expect(mapStrings(config, ['rules'], (text) => text.toUpperCase())).toEqual({
      a: 'X',
      rules: { field: 'y' },
      list: ['Z', 1],
    })
    const seen: string[] = []
    visitStrings(config, ['rules'], (_text, path) => seen.push(formatPath(path)))
    expect(seen).toEqual(['a', 'list[0]'])
  })
})
