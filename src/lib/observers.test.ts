import { describe, expect, it } from 'vitest'
import { createObservers } from './observers.js'

describe('observers', () => {
  it('runs listeners in the order they were added, each awaited before the next', async () => {
    const seen: string[] = []
    const observers = createObservers<[string]>()
    observers.add(async (x) => {
      await new Promise((resolve) => setImmediate(resolve))
      seen.push(`first ${x}`)
    })
    observers.add(async (x) => void seen.push(`second ${x}`))
    await observers.notify('a')
    expect(seen).toEqual(['first a', 'second a'])
  })

  it('a listener that throws rejects notify and stops the rest', async () => {
    const seen: string[] = []
    const observers = createObservers<[]>()
    observers.add(async () => {
      throw new Error('refused')
    })
    observers.add(async () => void seen.push('after'))
    await expect(observers.notify()).rejects.toThrow('refused')
    expect(seen).toEqual([])
  })

  it('a removed listener is not called; with none, notify resolves', async () => {
    const seen: number[] = []
    const observers = createObservers<[number]>()
    const remove = observers.add(async (n) => void seen.push(n))
    await observers.notify(1)
    remove()
    await observers.notify(2)
    expect(seen).toEqual([1])
  })
})
