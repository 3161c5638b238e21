import { describe, expect, it } from 'vitest'
import { orNode, parseFilter } from '../../lib/filter/index.js'
import type { CompiledGrant, Decision } from './decide.js'
import { handOutRefusal, type HandOutRefusal } from './hand-out.js'

const mine = { owner: { _eq: '$CURRENT_USER' } }
const red = { team: { _eq: 'red' } }
const mineAndDraft = { owner: { _eq: '$CURRENT_USER' }, status: 'draft' }

const grant = (itemFilter: unknown = null, fields: string[] | null = null): CompiledGrant => ({
  resource: 'collections/notes',
  action: 'update',
  itemFilter: itemFilter === null ? null : parseFilter(itemFilter),
  fields,
})
const held = (itemFilter: unknown = null, fields: string[] | null = null): Decision => ({
  allowed: true,
  itemFilter: itemFilter === null ? null : parseFilter(itemFilter),
  fields,
})
const notHeld: Decision = { allowed: false, itemFilter: null, fields: null }
const heldEither: Decision = { allowed: true, itemFilter: orNode([parseFilter(mine), parseFilter(red)]), fields: null }

describe('handOutRefusal(grant, held)', () => {
  const rows: { name: string; grant: CompiledGrant; held: Decision; refusal: HandOutRefusal }[] = [
    { name: 'not held at all', grant: grant(), held: notHeld, refusal: 'permission' },
    { name: 'not held, even narrowed', grant: grant(mine, ['title']), held: notHeld, refusal: 'permission' },
    { name: 'held on every row and column', grant: grant(), held: held(), refusal: null },
    { name: 'held on every row, handed out narrower', grant: grant(mine, ['title']), held: held(), refusal: null },
    { name: 'held on own rows, handed out on every row', grant: grant(), held: held(mine), refusal: 'rows' },
    { name: 'held on own rows, handed out the same', grant: grant(mine), held: held(mine), refusal: null },
    { name: 'held on own rows, handed out on other rows', grant: grant(red), held: held(mine), refusal: 'rows' },
    {
      name: 'a narrower but different filter is refused too',
      grant: grant(mineAndDraft),
      held: held(mine),
      refusal: 'rows',
    },
    { name: 'held on either of two scopes, handed out one', grant: grant(red), held: heldEither, refusal: null },
    {
      name: 'held on either of two scopes, handed out both',
      grant: grant({ _or: [mine, red] }),
      held: heldEither,
      refusal: null,
    },
    { name: 'held on either of two scopes, handed out every row', grant: grant(), held: heldEither, refusal: 'rows' },
    {
      name: 'held on two columns, handed out one',
      grant: grant(null, ['title']),
      held: held(null, ['title', 'body']),
      refusal: null,
    },
    {
      name: 'held on two columns, handed out both',
      grant: grant(null, ['body', 'title']),
      held: held(null, ['title', 'body']),
      refusal: null,
    },
    {
      name: 'held on two columns, handed out a third',
      grant: grant(null, ['title', 'secret']),
      held: held(null, ['title', 'body']),
      refusal: 'fields',
    },
    {
      name: 'held on two columns, handed out every column',
      grant: grant(),
      held: held(null, ['title', 'body']),
      refusal: 'fields',
    },
    { name: 'held on every column, handed out none', grant: grant(null, []), held: held(), refusal: null },
  ]
  it.each(rows)('$name → $refusal', ({ grant: g, held: h, refusal }) => {
    expect(handOutRefusal(g, h)).toBe(refusal)
  })
})
