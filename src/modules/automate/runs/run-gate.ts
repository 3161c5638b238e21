/**
 * At most `limit` background runs execute at once in this instance; the rest wait their turn in order
 * (holding their places, their rows renewed as any active run). Beyond a few hundred runs interleaving on
 * one event loop, each only costs more (memory, scheduling) and none ends sooner: the bound the flow-runs
 * queue's concurrency used to give. Runs in their caller (runNow) never wait here: a parent inside the
 * gate awaiting its sub-run could otherwise wait on itself.
 */
export function createRunGate(limit: number) {
  let active = 0
  const waiting: (() => void)[] = []
  return {
    async run<T>(work: () => Promise<T>): Promise<T> {
      if (active < limit) active++
      else await new Promise<void>((resolve) => waiting.push(resolve))
      try {
        return await work()
      } finally {
        // The place passes to the next in line, or frees.
        const next = waiting.shift()
        if (next) next()
        else active--
      }
    },
  }
}
