import { checkClaims, type Slots } from './slots.js'

/** Slots for the embedded mode: one process, places in a map of key → holder → lease end. */
export function createMemorySlots(): Slots {
  const keys = new Map<string, Map<string, number>>()
  let closed = false

  function live(key: string, now: number): Map<string, number> | undefined {
    const holders = keys.get(key)
    if (!holders) return undefined
    for (const [holder, until] of holders) if (until <= now) holders.delete(holder)
    if (holders.size === 0) {
      keys.delete(key)
      return undefined
    }
    return holders
  }
  const assertOpen = () => {
    if (closed) throw new Error('Slots are closed')
  }

  return {
    shared: false,
    async acquire(holder, claims, leaseMs, now) {
      assertOpen()
      checkClaims(holder, claims, leaseMs)
      for (const { key, limit } of claims) {
        const holders = live(key, now)
        if (holders && !holders.has(holder) && holders.size >= limit) return false
      }
      for (const { key } of claims) {
        let holders = keys.get(key)
        if (!holders) keys.set(key, (holders = new Map()))
        holders.set(holder, now + leaseMs)
      }
      return true
    },
    async renew(holder, claimKeys, leaseMs, now) {
      assertOpen()
      let all = true
      for (const key of claimKeys) {
        const holders = live(key, now)
        if (holders?.has(holder)) holders.set(holder, now + leaseMs)
        else all = false
      }
      return all
    },
    async release(holder, claimKeys) {
      assertOpen()
      for (const key of claimKeys) {
        const holders = keys.get(key)
        if (holders?.delete(holder) && holders.size === 0) keys.delete(key)
      }
    },
    async count(key, now) {
      assertOpen()
      return live(key, now)?.size ?? 0
    },
    async close() {
      closed = true
      keys.clear()
    },
  }
}
