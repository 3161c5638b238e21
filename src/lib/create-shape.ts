/**
 * Readers for the blueprint round trip (issue 29 item 6): each module turns a live resource, as its GET
 * answers it, into the exact body its create call takes, canonical: server-owned fields (ids, times,
 * versions, derived values) left out, nulls that mean "absent" left out. Key order is free; compare with a
 * deep equality. Secrets are never read back: where a resource holds one, its shape carries the mask.
 */

/** The keys of `value` that `keys` names, in that order, leaving out undefined and (unless kept) null. */
export function pickShape<T extends Record<string, unknown>>(
  value: T,
  keys: readonly (keyof T & string)[],
  keepNull: readonly string[] = [],
): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key of keys) {
    const v = value[key]
    if (v === undefined || (v === null && !keepNull.includes(key))) continue
    out[key] = v
  }
  return out
}
