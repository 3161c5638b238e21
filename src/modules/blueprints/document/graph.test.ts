import { describe, expect, it } from 'vitest'
import { dependencyCycles, dependencyOrder, unknownDependencies } from './graph.js'
import { readBlueprint } from './read.js'
import { brick, documentOf, lineOf } from './test-document.js'

const view = (info: string) => brick(`view ${info}`, { name: 'All' })
const b = (id: string, ...needs: string[]) => ({ id, needs })

describe('the needs graph in a document', () => {
  it('brick.unknown_dependency: needs names a missing brick', () => {
    const source = documentOf([view('id=a needs=ghost')])
    expect(readBlueprint(source).diagnostics).toEqual([
      {
        severity: 'error',
        code: 'brick.unknown_dependency',
        message: expect.stringContaining('ghost'),
        line: lineOf(source, 'id=a'),
        brickId: 'a',
      },
    ])
  })

  it('brick.dependency_cycle: once per cycle, at its first brick', () => {
    const source = documentOf([view('id=a needs=c'), view('id=b needs=a'), view('id=c needs=b'), view('id=d needs=d')])
    expect(readBlueprint(source).diagnostics).toEqual([
      {
        severity: 'error',
        code: 'brick.dependency_cycle',
        message: 'needs form a cycle among a, b, c',
        line: lineOf(source, 'id=a'),
        brickId: 'a',
      },
      {
        severity: 'error',
        code: 'brick.dependency_cycle',
        message: 'd needs itself',
        line: lineOf(source, 'id=d'),
        brickId: 'd',
      },
    ])
  })
})

describe('graph helpers', () => {
  it('dependency order: each brick after what it needs, otherwise in document order', () => {
    const bricks = [b('nav', 'view'), b('view', 'tickets'), b('roles'), b('tickets'), b('grants', 'roles', 'tickets')]
    expect(dependencyOrder(bricks).map((x) => x.id)).toEqual(['roles', 'tickets', 'view', 'nav', 'grants'])
    expect(dependencyOrder([b('a'), b('b'), b('c')]).map((x) => x.id)).toEqual(['a', 'b', 'c'])
  })

  it('bricks in a cycle come last, in document order; unknown needs are ignored', () => {
    expect(dependencyOrder([b('x', 'y'), b('y', 'x'), b('z', 'ghost')]).map((x) => x.id)).toEqual(['z', 'x', 'y'])
    expect(unknownDependencies([b('z', 'ghost', 'x'), b('x')])).toEqual([{ brickId: 'z', missing: 'ghost' }])
  })

  it('walks a chain of 50,000 bricks without touching the call stack', () => {
    const chain = Array.from({ length: 50_000 }, (_, i) => b(`b${i}`, ...(i > 0 ? [`b${i - 1}`] : [])))
    const reversed = [...chain].reverse()
    expect(dependencyOrder(reversed).map((x) => x.id)).toEqual(chain.map((x) => x.id))
    expect(dependencyCycles(reversed)).toEqual([])
    const loop = [...chain.slice(1), b('b0', 'b49999')]
    expect(dependencyCycles(loop)).toHaveLength(1)
    expect(dependencyCycles(loop)[0]).toHaveLength(50_000)
  })
})
