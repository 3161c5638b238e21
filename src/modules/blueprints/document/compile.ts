import type { ParamDecl } from './params.js'

/**
 * Rule 3 of the envelope: `${params.name}` is substituted at compile time inside JSON string values only.
 * Keys, numbers and everything else in a string are left exactly as written, so flow templates (`{{ … }}`),
 * expression blocks and server-side filter variables such as `$CURRENT_USER` pass through untouched. A
 * secret parameter compiles to the placeholder `${secret:<name>}`, never to a value: the compiler is never
 * given one.
 */

/** `${params.<anything up to the brace>}`: a malformed name is still found, so it can be reported. */
const reference = /\$\{params\.([^}]*)\}/g

/** The parameter names a string refers to, in order, each once. */
export function referencesIn(text: string): string[] {
  if (!text.includes('${params.')) return []
  return [...new Set(Array.from(text.matchAll(reference), (m) => m[1]!))]
}

/** The placeholder a secret parameter compiles to. */
export function secretPlaceholder(name: string): string {
  return `\${secret:${name}}`
}

/**
 * Calls `visit` with every string value inside a JSON value (object keys are not values), in document
 * order, walking with a stack of its own so that no depth reaches the call stack.
 */
export function forEachString(value: unknown, visit: (text: string) => void): void {
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const item = stack.pop()
    if (typeof item === 'string') visit(item)
    if (item === null || typeof item !== 'object') continue
    const children = Array.isArray(item) ? item : Object.values(item)
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i])
  }
}

export interface Compiled {
  /** The body with every reference it could resolve substituted. */
  readonly value: unknown
  /** Parameters referred to that have neither a value nor a default (plan's `params.unresolved`). */
  readonly unresolved: readonly string[]
}

/**
 * Substitutes parameters into a brick body. `values` are the non-secret values given for this compile
 * (a value given for a secret parameter is ignored here; plan and install refuse it before). A string that
 * is exactly one reference to a number or boolean parameter becomes that number or boolean, so a number
 * can be given where the API wants one (decision 068); everywhere else the value is written into the string.
 * A reference to an undeclared parameter is left as written (validation has reported it).
 */
export function compileBody(
  body: unknown,
  params: readonly ParamDecl[],
  values: Readonly<Record<string, unknown>>,
): Compiled {
  const byName = new Map(params.map((p) => [p.name, p]))
  const unresolved = new Set<string>()
  const resolve = (name: string): { found: true; value: unknown } | { found: false } => {
    const param = byName.get(name)
    if (!param) return { found: false }
    if (param.type === 'secret') return { found: true, value: secretPlaceholder(name) }
    if (Object.hasOwn(values, name) && values[name] !== undefined) return { found: true, value: values[name] }
    if (param.hasDefault) return { found: true, value: param.default }
    unresolved.add(name)
    return { found: false }
  }
  const compileString = (text: string): unknown => {
    if (!text.includes('${params.')) return text
    const whole = /^\$\{params\.([^}]*)\}$/.exec(text)
    if (whole) {
      const param = byName.get(whole[1]!)
      const resolved = resolve(whole[1]!)
      if (resolved.found && (param?.type === 'number' || param?.type === 'boolean')) return resolved.value
    }
    return text.replace(reference, (written, name: string) => {
      const resolved = resolve(name)
      return resolved.found ? String(resolved.value) : written
    })
  }
  // Brick bodies are parsed with their nesting bounded (maxJsonNesting), so recursion here stays shallow.
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return compileString(value)
    if (Array.isArray(value)) return value.map(walk)
    if (value !== null && typeof value === 'object') {
      // fromEntries defines own properties, so even a key spelled __proto__ stays data.
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]))
    }
    return value
  }
  return { value: walk(body), unresolved: [...unresolved] }
}
