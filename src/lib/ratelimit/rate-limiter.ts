/** The verdict on one hit. */
export interface RateLimitResult {
  readonly allowed: boolean
  /** Hits left in the current window after this one; 0 once refused. */
  readonly remaining: number
  /** Whole seconds until the window admits again: at least 1 when refused, 0 when allowed (for Retry-After). */
  readonly retryAfterSeconds: number
}

/**
 * A fixed-window counter: the first hit on a key opens a window of `windowMs`, and at most `limit` hits
 * are allowed until it closes. A key should always be hit with the same limit and window; put the rule's
 * name in the key when one subject is limited by several rules.
 */
export interface RateLimiter {
  /** Counts one hit on the key. */
  hit(key: string, limit: number, windowMs: number): Promise<RateLimitResult>
  /** The hits counted on the key in its current window (refused ones too), 0 when it has none; counts nothing itself. */
  count(key: string): Promise<number>
  /** Releases what the limiter holds (memory, connections). Idempotent. */
  close(): Promise<void>
}

/** Checks the arguments of `hit`, which callers build from settings. Throws RangeError (no AppError code). */
export function assertHitArguments(limit: number, windowMs: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`)
  if (!Number.isSafeInteger(windowMs) || windowMs < 1)
    throw new RangeError(`windowMs must be a positive integer, got ${windowMs}`)
}

/** Builds the verdict from the count including this hit and the milliseconds left in the window. */
export function toResult(count: number, limit: number, msLeft: number): RateLimitResult {
  const allowed = count <= limit
  return {
    allowed,
    remaining: Math.max(0, limit - count),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(msLeft / 1000)),
  }
}
