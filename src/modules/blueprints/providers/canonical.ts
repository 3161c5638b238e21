import { createHash } from 'node:crypto'

/**
 * The canonical form of a brick body or a live resource's create shape (automation spec "Round-trip
 * guarantee"): object keys sorted (key order is not significant), array order kept (it is), undefined
 * dropped. Per-kind normalisation (the json spellings, a lookup's resultType) happens in the create
 * shapes before this.
 */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key]
    if (v !== undefined) out[key] = canonical(v)
  }
  return out
}

/** sha256 of the canonical JSON, hex: the content hash a plan reports and the ledger keeps. */
export function contentHash(value: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(canonical(value)))
    .digest('hex')
}

/**
 * The paths where `desired` and `live` differ, as `a.b[2].c`, shallowest first: an object's keys are
 * walked, anything else (arrays included: their order is significant) is compared whole. A path in
 * `ignored` (exactly, or as a prefix) is not compared.
 */
export function changedPaths(desired: unknown, live: unknown, ignored: readonly string[] = []): string[] {
  const out: string[] = []
  const skip = (path: string) => ignored.some((i) => path === i || path.startsWith(`${i}.`))
  const walk = (a: unknown, b: unknown, path: string) => {
    if (path !== '' && skip(path)) return
    if (isObject(a) && isObject(b)) {
      for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort())
        walk(a[key], b[key], path === '' ? key : `${path}.${key}`)
      return
    }
    if (JSON.stringify(canonical(a)) !== JSON.stringify(canonical(b))) out.push(path === '' ? '$' : path)
  }
  walk(desired, live, '')
  return out
}

/** `value` without the paths in `ignored` (top-level or dotted object paths), for hashing what is compared. */
export function withoutPaths(value: Record<string, unknown>, ignored: readonly string[]): Record<string, unknown> {
  const out = structuredClone(value)
  for (const path of ignored) {
    const parts = path.split('.')
    let at: unknown = out
    for (const part of parts.slice(0, -1)) at = isObject(at) ? at[part] : undefined
    if (isObject(at)) delete at[parts[parts.length - 1]!]
  }
  return out
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
