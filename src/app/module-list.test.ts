import { describe, expect, it } from 'vitest'
import type { AppModule } from '../lib/module.js'
import { moduleList } from './module-list.js'

describe('moduleList', () => {
  const list = moduleList<{ prefix: string }>()
    .add('first', (c) => ({ service: `${c.prefix}1` }))
    .add('second', async (c, m) => ({ service: `${m.first.service}+${c.prefix}2` }))
    .add('third', (_c, m) => ({ service: m.second.service.length }))

  it('builds each entry in order from the ones above it, and reports each as it is built', async () => {
    const seen: AppModule[] = []
    const built = await list.compose({ prefix: 'p' }, (module) => seen.push(module))
    expect(list.names).toEqual(['first', 'second', 'third'])
    expect(built.second.service).toBe('p1+p2')
    expect(built.third.service).toBe(5)
    expect(seen).toEqual([built.first, built.second, built.third])
  })

  it('stops at a failing entry, having reported only those built before it', async () => {
    const failing = list.add('fourth', () => {
      throw new Error('no')
    })
    const seen: AppModule[] = []
    await expect(failing.compose({ prefix: 'p' }, (module) => seen.push(module))).rejects.toThrow('no')
    expect(seen).toHaveLength(3)
  })

  it('refuses, as a type error, a name used twice or a module below the entry', () => {
    // @ts-expect-error the name `first` is taken
    list.add('first', () => ({}))
    // @ts-expect-error `later` is not built before this entry
    moduleList<object>().add('early', (_c, m) => ({ service: m.later }))
  })
})
