import { checkClaims, type Slots } from './slots.js'

interface Key {
  /** holder → lease end */
  readonly holders: Map<string, number>
  /** No lease ends before this (a lower bound: releases and renewals leave it early, never late). */
  soonest: number
}

/** Slots for the embedded mode: one process, places in a map of key → holder → lease end. */
export function createMemorySlots(): Slots {
  const keys = new Map<string, Key>()
  let closed = false

  /**
   * The key's live holders. Expired leases are dropped only once one can have ended: a key held by a
   * thousand runs is tried on every start and every wake-up, and scanning its holders each time cost more
   * than the run itself (bench/flows.ts).
   */
  function live(name: string, now: number): Key | undefined {
    const key = keys.get(name)
    if (!key) return undefined
    if (key.soonest <= now) {
      let soonest = Infinity
      for (const [holder, until] of key.holders) {
        if (until <= now) key.holders.delete(holder)
        else if (until < soonest) soonest = until
      }
      key.soonest = soonest
    }
    if (key.holders.size === 0) {
      keys.delete(name)
      return undefined
    }
    return key
  }
  function hold(key: Key, holder: string, until: number): void {
    key.holders.set(holder, until)
    if (until < key.soonest) key.soonest = until
  }
  const assertOpen = () => {
    if (closed) throw new Error('Slots are closed')
  }

  return {
    shared: false,
    async acquire(holder, claims, leaseMs, now) {
      assertOpen()
      checkClaims(holder, claims, leaseMs)
      for (const { key: name, limit } of claims) {
        const key = live(name, now)
        if (key && !key.holders.has(holder) && key.holders.size >= limit) return false
      }
      for (const { key: name } of claims) {
        let key = keys.get(name)
        if (!key) keys.set(name, (key = { holders: new Map(), soonest: Infinity }))
        hold(key, holder, now + leaseMs)
      }
      return true
    },
    async renew(holder, claimKeys, leaseMs, now) {
      assertOpen()
      let all = true
      for (const name of claimKeys) {
        const key = live(name, now)
        if (key?.holders.has(holder)) hold(key, holder, now + leaseMs)
        else all = false
      }
      return all
    },
    async release(holder, claimKeys) {
      assertOpen()
      for (const name of claimKeys) {
        const key = keys.get(name)
        if (key?.holders.delete(holder) && key.holders.size === 0) keys.delete(name)
      }
    },
    async count(name, now) {
      assertOpen()
      return live(name, now)?.holders.size ?? 0
    },
    async close() {
      closed = true
      keys.clear()
    },
  }
}
