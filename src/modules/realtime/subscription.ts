import type { Principal } from '../../lib/principal.js'
import type { StreamView } from './delivery.js'

/** Who a stream is for, and how to learn who that is at each event. */
export interface StreamCaller {
  readonly principal: Principal
  /** The caller as of now (a revoked session, a role change, a revoked key apply); throws unauthorized. */
  refresh(): Promise<Principal>
  /**
   * Equal for two callers whose refresh() resolves the same credential the same way (a digest of the
   * token, cookie and project it is read from): at each event one refresh serves every stream of the key.
   * Without one, the caller shares with no other.
   */
  readonly key?: string
  /** A capability token's one record; null for sessions, keys and anonymous callers. */
  readonly document: { readonly collection: string; readonly id: string } | null
  /** When a capability token stops working (Unix seconds); null otherwise. */
  readonly expiresAt: number | null
}

/** A checked stream request, ready to be attached to a connection. */
export interface Subscription {
  readonly projectId: string
  readonly collection: string
  readonly view: StreamView
  /** Equal for two subscriptions whose views (filter, ids) are equal: part of a visibility class. */
  readonly viewKey: string
  /** Fields the request's filter reads: each must stay readable for the stream to go on. */
  readonly filterFields: ReadonlySet<string>
  readonly caller: StreamCaller
}

let unique = 0
const callerKeys = new WeakMap<StreamCaller, string>()

/** The caller's key, or one of its own. */
export function callerKeyOf(caller: StreamCaller): string {
  if (caller.key !== undefined) return caller.key
  let key = callerKeys.get(caller)
  if (key === undefined) callerKeys.set(caller, (key = `\u0000caller:${unique++}`))
  return key
}

// What JSON would merge with another value (NaN and null, undefined and absent) is spelled apart.
function faithful(_key: string, value: unknown): unknown {
  if (value === undefined) return '\u0000undefined'
  if (typeof value === 'number' && !Number.isFinite(value)) return `\u0000number:${value}`
  if (typeof value === 'bigint') return `\u0000bigint:${value}`
  if (typeof value === 'string' && value.startsWith('\u0000')) return `\u0000${value}`
  return value
}

/**
 * A value as a grouping key: equal keys for equal values only. A value it cannot spell (a cycle) gets a
 * key of its own, so it shares nothing rather than risk sharing with a different value.
 */
export function keyOf(value: unknown): string {
  try {
    return JSON.stringify(value, faithful)
  } catch {
    return `\u0000unique:${unique++}`
  }
}
