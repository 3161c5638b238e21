import { describe, expect, it } from 'vitest'
import { checkPlacements, type Placement } from './tree.js'

const p = (id: string, parentId: string | null = null): Placement => ({ id, parentId })
const chain = (n: number) => Array.from({ length: n }, (_, i) => p(`i${i}`, i === 0 ? null : `i${i - 1}`))

describe('checkPlacements', () => {
  const rows: { name: string; items: Placement[]; expected: null | { id: string; reason: string } }[] = [
    { name: 'empty', items: [], expected: null },
    { name: 'flat', items: [p('a'), p('b')], expected: null },
    { name: 'nested, parent listed after child', items: [p('b', 'a'), p('a')], expected: null },
    { name: 'five levels', items: chain(5), expected: null },
    { name: 'six levels', items: chain(6), expected: { id: 'i5', reason: 'too_deep' } },
    { name: 'unknown parent', items: [p('a', 'zz')], expected: { id: 'a', reason: 'unknown_parent' } },
    { name: 'own parent', items: [p('a', 'a')], expected: { id: 'a', reason: 'cycle' } },
    { name: 'two-item cycle', items: [p('a', 'b'), p('b', 'a')], expected: { id: 'a', reason: 'cycle' } },
    {
      name: 'cycle below a root',
      items: [p('r'), p('a', 'c'), p('b', 'a'), p('c', 'b')],
      expected: { id: 'a', reason: 'cycle' },
    },
    {
      name: 'a chain leading into a cycle blames the cycle',
      items: [p('x', 'a'), p('a', 'b'), p('b', 'a')],
      expected: { id: 'a', reason: 'cycle' },
    },
    {
      name: 'an unknown parent is blamed on the item naming it',
      items: [p('child', 'mid'), p('mid', 'zz')],
      expected: { id: 'mid', reason: 'unknown_parent' },
    },
  ]
  for (const row of rows)
    it(row.name, () => {
      const problem = checkPlacements(row.items)
      if (row.expected === null) expect(problem).toBeNull()
      else expect(problem).toMatchObject(row.expected)
    })
})
