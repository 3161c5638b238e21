/** Time, injected so tests can hold it still. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
  /** Whole Unix seconds, the unit of every timestamp the API returns. */
  seconds(): number
}

export const systemClock: Clock = {
  now: () => Date.now(),
  seconds: () => Math.floor(Date.now() / 1000),
}
