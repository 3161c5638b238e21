import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { assertTemplates, checkTemplates, resolveTemplates } from './deep.js'

const context = {
  $trigger: { body: { id: 'r1', title: 'Hi', tags: ['a'], amount: 12 } },
  $steps: { lookup: { rows: [{ email: 'ann@example.com' }] } },
}

describe('resolveTemplates (a whole step config)', () => {
  it('resolves every string value at any depth and keeps everything else', () => {
    const config = {
      url: 'https://example.com/items/{{$trigger.body.id}}',
      method: 'POST',
      timeout_ms: 5000,
      headers: { 'X-Title': '{{$trigger.body.title}}' },
      body: {
        tags: '{{$trigger.body.tags}}',
        amount: '{{$trigger.body.amount}}',
        list: ['{{$steps.lookup.rows[0].email}}', 3, null, true],
      },
      '{{$trigger.body.id}}': 'keys are not templates',
    }
    const { value, unresolved } = resolveTemplates(config, context)
    expect(value).toEqual({
      url: 'https://example.com/items/r1',
      method: 'POST',
      timeout_ms: 5000,
      headers: { 'X-Title': 'Hi' },
      body: { tags: ['a'], amount: 12, list: ['ann@example.com', 3, null, true] },
      '{{$trigger.body.id}}': 'keys are not templates',
    })
    expect(unresolved).toEqual([])
    // The config itself is untouched.
    expect(config.url).toBe('https://example.com/items/{{$trigger.body.id}}')
  })

  it('lists each tag that gave the empty value with its path in the config', () => {
    const { value, unresolved } = resolveTemplates(
      { to: ['{{$trigger.body.email}}'], 'odd key': { subject: 'Re: {{$nope}}' } },
      context,
    )
    expect(value).toEqual({ to: [''], 'odd key': { subject: 'Re: ' } })
    expect(unresolved.map((u) => [u.path, u.reason])).toEqual([
      ['to[0]', 'missing_key'],
      ['["odd key"].subject', 'unknown_root'],
    ])
  })

  it('a string config is itself a template; scalars pass through', () => {
    expect(resolveTemplates('{{$trigger.body.amount}}', context).value).toBe(12)
    expect(resolveTemplates(7, context).value).toBe(7)
    expect(resolveTemplates(null, context).value).toBeNull()
  })

  it('a __proto__ key in the config stays an ordinary key and pollutes nothing', () => {
    const config = JSON.parse('{"__proto__": {"polluted": "{{$trigger.body.title}}"}, "a": 1}') as unknown
    const { value } = resolveTemplates(config, context)
    expect(Object.keys(value as object)).toEqual(['__proto__', 'a'])
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toEqual({ polluted: 'Hi' })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect((value as Record<string, unknown>).polluted).toBeUndefined()
  })
})

describe('checkTemplates and assertTemplates (a flow being saved)', () => {
  const roots = ['$trigger', '$steps', '$user', '$flow', '$run', '$now']

  it('finds every bad template with its path and offset', () => {
    const config = {
      url: 'https://x/{{ $trigger.body.id',
      headers: { A: '{{}}' },
      list: ['ok {{$now}}', '{{$secrets.key}}'],
    }
    expect(checkTemplates(config, { roots }).map((i) => [i.path, i.code, i.position])).toEqual([
      ['url', 'unclosed_tag', 10],
      ['headers.A', 'empty_tag', 0],
      ['list[1]', 'unknown_root', 0],
    ])
    expect(checkTemplates({ fine: '{{$trigger.body}}', n: 1 }, { roots })).toEqual([])
  })

  it('assertTemplates throws validation_error (422) naming the first one, under `at`', () => {
    let thrown: unknown
    try {
      assertTemplates({ message: 'Hi {{ a.b[x] }}', other: '{{}}' }, { at: 'operations[2].config' })
    } catch (err) {
      thrown = err
    }
    expect(thrown).toBeInstanceOf(AppError)
    const err = thrown as AppError
    expect(err.status).toBe(422)
    expect(err.code).toBe('validation_error')
    expect(err.message).toContain('operations[2].config.message')
    expect(err.details.issues).toEqual([
      {
        path: 'operations[2].config.message',
        code: 'invalid_path',
        position: 10,
        message: expect.stringContaining('offset 10'),
      },
      { path: 'operations[2].config.other', code: 'empty_tag', position: 0, message: expect.any(String) },
    ])
    expect(() => assertTemplates({ ok: '{{a}}' })).not.toThrow()
  })
})
