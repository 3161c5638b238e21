import { describe, expect, it } from 'vitest'
import { readBlueprint } from '../document/read.js'
import { brick, documentOf, lineOf, namespaceParam } from '../document/test-document.js'

const records = (body: Record<string, unknown>, params?: string) =>
  documentOf([brick('records id=seed', { collection: '${params.prefix}_tickets', ...body })], params ? { params } : {})

function expectOnly(source: string, code: string, message: string | RegExp) {
  expect(readBlueprint(source).diagnostics).toEqual([
    {
      severity: 'error',
      code,
      message: typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message),
      line: lineOf(source, 'service:records'),
      brickId: 'seed',
    },
  ])
}

describe('records bricks', () => {
  it('natural-key rows with the same columns validate (key defaults to slug, name or title)', () => {
    expect(
      readBlueprint(
        records({
          rows: [
            { slug: 'a', n: 1 },
            { slug: 'b', n: 2 },
          ],
        }),
      ).diagnostics,
    ).toEqual([])
    expect(readBlueprint(records({ rows: [{ title: 'A' }, { title: 'B' }] })).diagnostics).toEqual([])
    expect(readBlueprint(records({ key: 'code', rows: [{ code: 1 }, { code: 2 }] })).diagnostics).toEqual([])
    expect(readBlueprint(records({ rows: [] })).diagnostics).toEqual([])
  })

  it('brick.no_row_identity: no key named and no slug, name or title column', () => {
    expectOnly(records({ rows: [{ colour: 'red' }] }), 'brick.no_row_identity', 'slug, name, title')
  })

  it('brick.no_row_identity: the named key is not a column', () => {
    expectOnly(records({ key: 'code', rows: [{ slug: 'a' }] }), 'brick.no_row_identity', 'no row has code')
  })

  it('brick.no_row_identity: a row whose key is empty or not a scalar', () => {
    expectOnly(records({ rows: [{ slug: 'a' }, { slug: '' }] }), 'brick.no_row_identity', 'row 1 has no slug')
    expectOnly(records({ rows: [{ slug: ['a'] }] }), 'brick.no_row_identity', 'row 0 has no slug')
  })

  it('brick.duplicate_row_identity: two rows share their key', () => {
    expectOnly(
      records({ rows: [{ slug: 'a' }, { slug: 'b' }, { slug: 'a' }] }),
      'brick.duplicate_row_identity',
      'rows 0 and 2 share the slug "a"',
    )
  })

  it('a number key and the same digits as text are different identities', () => {
    expect(readBlueprint(records({ key: 'code', rows: [{ code: 1 }, { code: '1' }] })).diagnostics).toEqual([])
  })

  it('brick.ragged_rows: a row with other columns', () => {
    expectOnly(records({ rows: [{ slug: 'a', n: 1 }, { slug: 'b' }] }), 'brick.ragged_rows', 'row 1')
    expectOnly(records({ rows: [{ slug: 'a' }, { slug: 'b', extra: true }] }), 'brick.ragged_rows', 'row 1')
  })

  it('brick.too_many_rows: more than 200 (200 is fine)', () => {
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ slug: `r${i}` }))
    expect(readBlueprint(records({ rows: rows(200) })).diagnostics).toEqual([])
    expectOnly(records({ rows: rows(201) }), 'brick.too_many_rows', 'this one has 201')
  })

  it.each([
    ['an @ref string', { slug: 'a', owner: '@ref:admins' }],
    ['an @ref object, nested', { slug: 'a', meta: { owner: { '@ref': 'admins' } } }],
  ])('brick.late_bound_ref: %s', (_, row) => {
    expectOnly(records({ rows: [row] }), 'brick.late_bound_ref', '@ref')
  })

  it('brick.secret_in_seed: a secret parameter in a row (a plain parameter is fine)', () => {
    const params = `${namespaceParam}  - name: token\n    type: secret\n  - name: greeting\n    type: string\n    default: hi\n`
    expectOnly(
      records({ rows: [{ slug: 'a', key: 'Bearer ${params.token}' }] }, params),
      'brick.secret_in_seed',
      'secret',
    )
    expectOnly(records({ rows: [{ slug: 'a', key: '${secret:token}' }] }, params), 'brick.secret_in_seed', 'secret')
    expect(readBlueprint(records({ rows: [{ slug: 'a', text: '${params.greeting}' }] }, params)).diagnostics).toEqual(
      [],
    )
  })

  it.each([
    ['no collection', { collection: undefined, rows: [] }, 'names its collection'],
    ['rows not a list', { rows: { slug: 'a' } }, 'rows: a list of objects'],
    ['a row that is not an object', { rows: ['a'] }, 'rows: a list of objects'],
  ])('brick.invalid_body: %s', (_, body, message) => {
    expectOnly(records(body), 'brick.invalid_body', message)
  })
})
