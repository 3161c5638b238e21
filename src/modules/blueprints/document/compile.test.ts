import { describe, expect, it } from 'vitest'
import { compileBody, referencesIn, secretPlaceholder } from './compile.js'
import type { ParamDecl } from './params.js'

const param = (name: string, type: ParamDecl['type'], value?: ParamDecl['default']): ParamDecl => ({
  name,
  type,
  namespace: name === 'prefix',
  hasDefault: value !== undefined,
  default: value,
  line: null,
})
const params = [
  param('prefix', 'identifier', 'desk'),
  param('limit', 'number', 25),
  param('live', 'boolean', false),
  param('owner', 'email'),
  param('token', 'secret'),
]

describe('compileBody', () => {
  it('substitutes inside string values only; keys, numbers and other template syntax pass through', () => {
    const body = {
      name: '${params.prefix}_tickets',
      '${params.prefix}': 'keys are not compiled',
      count: 3,
      template: 'Hello {{ $trigger.body.name }} from ${params.prefix} as $CURRENT_USER',
      expression: '{{= $sum($trigger.body.items.price) }}',
      filter: { owner: { _eq: '$CURRENT_USER' } },
      nested: [['${params.prefix}']],
    }
    expect(compileBody(body, params, {}).value).toEqual({
      name: 'desk_tickets',
      '${params.prefix}': 'keys are not compiled',
      count: 3,
      template: 'Hello {{ $trigger.body.name }} from desk as $CURRENT_USER',
      expression: '{{= $sum($trigger.body.items.price) }}',
      filter: { owner: { _eq: '$CURRENT_USER' } },
      nested: [['desk']],
    })
  })

  it('a given value wins over the default', () => {
    expect(compileBody({ name: '${params.prefix}_x' }, params, { prefix: 'crm' }).value).toEqual({ name: 'crm_x' })
  })

  it('a secret compiles to its placeholder, never to a value, even one given', () => {
    const compiled = compileBody({ headers: { Authorization: 'Bearer ${params.token}' } }, params, { token: 'leaked' })
    expect(compiled.value).toEqual({ headers: { Authorization: `Bearer ${secretPlaceholder('token')}` } })
    expect(secretPlaceholder('token')).toBe('${secret:token}')
    expect(JSON.stringify(compiled)).not.toContain('leaked')
  })

  it('a string that is exactly one number or boolean reference becomes that value; inside text it is written', () => {
    const compiled = compileBody(
      { max: '${params.limit}', on: '${params.live}', text: 'max ${params.limit}' },
      params,
      {},
    )
    expect(compiled.value).toEqual({ max: 25, on: false, text: 'max 25' })
  })

  it('reports the parameters that have neither a value nor a default, and leaves their references', () => {
    const compiled = compileBody({ to: '${params.owner}', cc: ['${params.owner}'] }, params, {})
    expect(compiled).toEqual({ value: { to: '${params.owner}', cc: ['${params.owner}'] }, unresolved: ['owner'] })
    expect(compileBody({ to: '${params.owner}' }, params, { owner: 'a@example.com' })).toEqual({
      value: { to: 'a@example.com' },
      unresolved: [],
    })
  })

  it('keeps a key spelled __proto__ as data', () => {
    const body = JSON.parse('{"__proto__": {"polluted": "${params.prefix}"}}') as unknown
    const compiled = compileBody(body, params, {}).value as Record<string, unknown>
    expect(Object.getPrototypeOf(compiled)).toBe(Object.prototype)
    expect(Object.hasOwn(compiled, '__proto__')).toBe(true)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})

describe('referencesIn', () => {
  it.each([
    ['plain text', []],
    ['${params.a} and ${params.b} and ${params.a}', ['a', 'b']],
    ['${params.}', ['']],
    ['${ params.a }', []],
    ['{{ params.a }}', []],
  ])('%j → %j', (text, names) => {
    expect(referencesIn(text)).toEqual(names)
  })
})
