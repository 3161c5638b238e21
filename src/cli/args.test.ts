import { describe, expect, it } from 'vitest'
import {
  camelCase,
  listOption,
  paramsOption,
  parseCommand,
  parseOpenCommand,
  planOptions,
  resolveBaseUrl,
  stringOption,
  UsageError,
} from './args.js'
import { exportQuery } from './export.js'

describe('parseCommand', () => {
  it('reads the common and the given options, and the file', () => {
    const parsed = parseCommand(
      ['app.md', '--url', 'http://x:1', '--json', '--param', 'a=1', '--param', 'b=x=y', '--assemblies', 'core,menu'],
      planOptions,
      1,
    )
    expect(parsed.positionals).toEqual(['app.md'])
    expect(stringOption(parsed, 'url')).toBe('http://x:1')
    expect(parsed.values.json).toBe(true)
    expect(paramsOption(parsed)).toEqual({ a: '1', b: 'x=y' })
    expect(listOption(parsed, 'assemblies')).toEqual(['core', 'menu'])
    expect(listOption(parsed, 'secrets-provided')).toBeUndefined()
  })

  it.each([
    { name: 'an unknown flag', argv: ['app.md', '--nope'], message: "Unknown option '--nope'" },
    { name: 'a second file', argv: ['a.md', 'b.md'], message: 'Unexpected argument: b.md' },
    // Node words these itself; the flag's name is what must be there.
    { name: 'a flag missing its value', argv: ['a.md', '--url'], message: '--url' },
    { name: 'a boolean given a value', argv: ['a.md', '--json=yes'], message: '--json' },
  ])('refuses $name as a usage error naming it', ({ argv, message }) => {
    expect(() => parseCommand(argv, planOptions, 1)).toThrow(UsageError)
    expect(() => parseCommand(argv, planOptions, 1)).toThrow(message)
  })

  it('splits lists on commas and across repeats, dropping blanks', () => {
    const parsed = parseCommand(['--assemblies', 'a, b,', '--assemblies', 'c'], planOptions, 0)
    expect(listOption(parsed, 'assemblies')).toEqual(['a', 'b', 'c'])
  })

  it('refuses a --param without a name or an =', () => {
    for (const bad of ['novalue', '=x']) {
      const parsed = parseCommand(['--param', bad], planOptions, 0)
      expect(() => paramsOption(parsed)).toThrow(UsageError)
    }
    expect(paramsOption(parseCommand(['--param', 'empty='], planOptions, 0))).toEqual({ empty: '' })
  })
})

describe('parseOpenCommand (export)', () => {
  it('passes every unknown flag through: values joined, repeats merged, a bare flag true, kebab to camel', () => {
    const { parsed, extra } = parseOpenCommand(
      [
        '--collections',
        'a,b',
        '--collections=c',
        '--nav',
        '--search-indexes',
        'idx',
        '-o',
        'out.md',
        '--json',
        '--future-kind',
        'z',
        '--namespace',
        'p',
      ],
      { output: { type: 'string', short: 'o' } },
      0,
    )
    expect(extra.sort()).toEqual(['collections', 'future-kind', 'namespace', 'nav', 'search-indexes'])
    expect(stringOption(parsed, 'output')).toBe('out.md')
    expect(parsed.values.json).toBe(true)
    expect(Object.fromEntries(exportQuery(parsed, extra))).toEqual({
      collections: 'a,b,c',
      nav: 'true',
      searchIndexes: 'idx',
      futureKind: 'z',
      namespace: 'p',
    })
  })

  it('a bare flag followed by another flag is a boolean; a positional is still refused', () => {
    const { parsed, extra } = parseOpenCommand(['--nav', '--flows', 'f1'], {}, 0)
    expect(Object.fromEntries(exportQuery(parsed, extra))).toEqual({ nav: 'true', flows: 'f1' })
    expect(() => parseOpenCommand(['stray'], {}, 0)).toThrow('Unexpected argument: stray')
  })

  it('camelCase', () => {
    expect(camelCase('search-indexes')).toBe('searchIndexes')
    expect(camelCase('flows')).toBe('flows')
  })
})

describe('resolveBaseUrl', () => {
  it.each([
    { flag: 'http://a:1/', env: { PLINTH_URL: 'http://b:2' }, url: 'http://a:1' },
    { flag: undefined, env: { PLINTH_URL: 'https://b.example/base/' }, url: 'https://b.example/base' },
    { flag: undefined, env: { PLINTH_URL: '', PORT: '9999' }, url: 'http://127.0.0.1:9999' },
    { flag: undefined, env: {}, url: 'http://127.0.0.1:8090' },
  ])('$flag / $env → $url', ({ flag, env, url }) => {
    expect(resolveBaseUrl(flag, env)).toBe(url)
  })

  it('refuses what is not an http(s) URL', () => {
    expect(() => resolveBaseUrl('not a url', {})).toThrow(UsageError)
    expect(() => resolveBaseUrl('ftp://x', {})).toThrow('Not an http(s) URL: ftp://x')
  })
})
