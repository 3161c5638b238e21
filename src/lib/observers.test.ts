import { describe, expect, it } from 'vitest'
import { createKeyedListeners, createObservers } from './observers.js'

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

describe('createKeyedListeners', () => {
  it('keeps listeners by key, forgets a key whose last listener left, and removes each once', () => {
    const listeners = createKeyedListeners<string>()
    expect(listeners.empty).toBe(true)
    const offA = listeners.add('p/a', 'one')
    listeners.add('p/a', 'two')
    const offB = listeners.add('p/b', 'three')
    expect(listeners.of('p/a')).toEqual(['one', 'two'])
    expect(listeners.of('p/c')).toEqual([])
    offA()
    offA()
    expect(listeners.of('p/a')).toEqual(['two'])
    offB()
    expect(listeners.of('p/b')).toEqual([])
    expect(listeners.empty).toBe(false)
    listeners.clear()
    expect(listeners.empty).toBe(true)
  })
})
