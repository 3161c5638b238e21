/** The namespace parameter an export declares, and what stands for the namespace in a body. */
export const namespaceParam = 'prefix'
export const namespacePlaceholder = `\${params.${namespaceParam}}`

/**
 * Where an export writes `${params.prefix}` for the namespace (decision 071). A resource's own name (a nav
 * item's label) has the namespace as a word replaced: `desk_tickets`, `desk-agent`, `desk tickets`, never
 * `desktop`. Anywhere else in a body only a whole name of the export's namespaced resources is (a view's
 * collection, a grant's `collections/desk_tickets`, a nav target): a column `desk_total` in a template is
 * not a resource and stays as written.
 */
export interface Namespacer {
  /** Whether a name holds the namespace as a word (what `*` selects, and the naming rule asks). */
  holds(name: string): boolean
  /** A resource's own name or label, the namespace as a word replaced. */
  name(text: string): string
  /** Any other string: each whole namespaced resource name in it templated. */
  text(text: string): string
}

/** `names`: the namespaced resource names a body may refer to. The namespace is an identifier (no escaping needed). */
export function namespacer(namespace: string, names: Iterable<string>): Namespacer {
  const word = `(?<![A-Za-z0-9_])${namespace}(?![A-Za-z0-9])`
  const test = new RegExp(word)
  const every = new RegExp(word, 'g')
  const holds = (name: string) => test.test(name)
  const name = (text: string) => text.replace(every, () => namespacePlaceholder)
  const known = [...new Set(names)]
    .filter(holds)
    .sort((a, b) => b.length - a.length || (a < b ? -1 : 1))
    .map((n) => n.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))
  // One pass over each string, so a placeholder written is never read again (a namespace named `params`).
  const whole = known.length === 0 ? null : new RegExp(`(?<![A-Za-z0-9_])(?:${known.join('|')})(?![A-Za-z0-9_])`, 'g')
  return {
    holds,
    name,
    text: (text) => (whole === null ? text : text.replace(whole, name)),
  }
}
