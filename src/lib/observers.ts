/**
 * What a module tells the modules built after it: each registers a listener at its own construction
 * (`collections.onRemoved.add(…)`), so nothing is bound late. Listeners run in the order they were
 * added, one after the other, and `notify` resolves once all have; a listener that throws stops the
 * rest and rejects `notify`, as a single callback would.
 */
export interface Observers<A extends unknown[]> {
  /** Adds a listener; returns its removal. */
  add(listener: (...args: A) => Promise<void>): () => void
}

export function createObservers<A extends unknown[]>(): Observers<A> & { notify(...args: A): Promise<void> } {
  const listeners: ((...args: A) => Promise<void>)[] = []
  return {
    add(listener) {
      listeners.push(listener)
      return () => {
        const at = listeners.indexOf(listener)
        if (at >= 0) listeners.splice(at, 1)
      }
    },
    async notify(...args) {
      for (const listener of [...listeners]) await listener(...args)
    },
  }
}

/**
 * Listeners grouped by a key (one collection's stream, one user's inbox): `add` returns the removal, and a
 * key whose last listener left is forgotten, so the map holds only keys someone listens to.
 */
export function createKeyedListeners<L>() {
  const byKey = new Map<string, Set<L>>()
  return {
    add(key: string, listener: L): () => void {
      let set = byKey.get(key)
      if (!set) byKey.set(key, (set = new Set()))
      set.add(listener)
      return () => {
        const current = byKey.get(key)
        if (!current?.delete(listener)) return
        if (current.size === 0) byKey.delete(key)
      }
    },
    /** The key's listeners as they are now (a copy: a listener may remove itself while called). */
    of(key: string): L[] {
      const set = byKey.get(key)
      return set ? [...set] : []
    },
    /** Whether anyone listens at all (a message nobody here waits for need not even be parsed). */
    get empty(): boolean {
      return byKey.size === 0
    },
    clear(): void {
      byKey.clear()
    },
  }
}
