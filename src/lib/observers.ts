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
