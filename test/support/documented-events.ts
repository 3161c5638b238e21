import { readFileSync } from 'node:fs'

/**
 * The JSON example of each event docs/events.md documents, by event name. A section's heading names its
 * events in backticks; `kind.*` stands for kind.create, kind.update and kind.delete, which share the example.
 */
export function documentedEvents(): Map<string, Record<string, unknown>> {
  const text = readFileSync(new URL('../../docs/events.md', import.meta.url), 'utf8')
  const out = new Map<string, Record<string, unknown>>()
  for (const section of text.split(/^## /m).slice(1)) {
    const heading = section.slice(0, section.indexOf('\n'))
    const example = /```json\n([\s\S]*?)\n```/.exec(section)?.[1]
    if (!example) continue
    for (const [, kind, action] of heading.matchAll(/`([a-z_]+)\.([a-z]+|\*)`/g))
      for (const a of action === '*' ? ['create', 'update', 'delete'] : [action])
        out.set(`${kind}.${a}`, JSON.parse(example) as Record<string, unknown>)
  }
  return out
}

/** The type of every value, keys sorted; before, after and file only as their type (their keys vary). */
export function eventShape(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return typeof value
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [
        k,
        k === 'before' || k === 'after' || k === 'file'
          ? typeof (value as Record<string, unknown>)[k]
          : eventShape((value as Record<string, unknown>)[k]),
      ]),
  )
}
