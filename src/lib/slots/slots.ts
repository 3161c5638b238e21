/** One limit a holder must fit under: at most `limit` holders of `key` at once. */
export interface SlotClaim {
  readonly key: string
  readonly limit: number
}

/**
 * Counting semaphores shared by every instance (Redis) or held in this process (memory), for limits such
 * as "at most N runs of this flow at once". A holder (a run id) takes one place under every claimed key at
 * once or none. Places are leases: one not renewed within `leaseMs` expires, so an instance that died
 * frees what it held. Time is the caller's clock (`now` in milliseconds), passed in, so tests move it.
 */
export interface Slots {
  /** True when other instances see the same places (Redis); false when this process is alone (memory). */
  readonly shared: boolean
  /**
   * Takes a place under every claim for `holder`, all or none; true when taken. A holder already holding
   * a key keeps its place (the lease is extended). Throws RangeError on bad arguments, Error once closed
   * or when Redis fails.
   */
  acquire(holder: string, claims: readonly SlotClaim[], leaseMs: number, now: number): Promise<boolean>
  /** Extends the holder's leases on these keys; false when one was no longer held (expired or released). */
  renew(holder: string, keys: readonly string[], leaseMs: number, now: number): Promise<boolean>
  /** Gives up the holder's places on these keys at once (unknown ones are ignored). */
  release(holder: string, keys: readonly string[]): Promise<void>
  /** Places held under `key` now (expired leases excluded). */
  count(key: string, now: number): Promise<number>
  /** Releases connections; idempotent. */
  close(): Promise<void>
}

/** Throws RangeError for arguments callers build from settings. */
export function checkClaims(holder: string, claims: readonly SlotClaim[], leaseMs: number): void {
  if (typeof holder !== 'string' || holder.length === 0) throw new RangeError('holder must be a non-empty string')
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 1)
    throw new RangeError(`leaseMs must be a positive integer, got ${leaseMs}`)
  for (const claim of claims) {
    if (!Number.isSafeInteger(claim.limit) || claim.limit < 1)
      throw new RangeError(`limit of ${claim.key} must be a positive integer, got ${claim.limit}`)
  }
}
