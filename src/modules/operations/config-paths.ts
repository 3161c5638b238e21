/**
 * Paths inside a step's config. A pattern (an operation's `rawPaths` and `nestedSteps`) is a dot path whose
 * parts may end in `[]`, meaning "every element of this array": `then`, `rules`, `cases[].steps`.
 */

export type ConfigPath = readonly (string | number)[]

const bareKey = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** `values[0]`, `headers.Authorization`, `["first name"]`: the spelling lib/template uses for config paths. */
export function formatPath(path: ConfigPath, prefix = ''): string {
  let out = prefix
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`
    else if (!bareKey.test(part)) out += `[${JSON.stringify(part)}]`
    else out += out === '' ? part : `.${part}`
  }
  return out
}

function tokens(pattern: string): string[] {
  return pattern.split('.').flatMap((part) => (part.endsWith('[]') ? [part.slice(0, -2), '[]'] : [part]))
}

/** True when `path` is the pattern's location or lies under it. */
export function isUnder(path: ConfigPath, pattern: string): boolean {
  const want = tokens(pattern)
  if (path.length < want.length) return false
  return want.every((token, i) => (token === '[]' ? typeof path[i] === 'number' : path[i] === token))
}

/** True when `path` lies at or under any of the patterns. */
export function isUnderAny(path: ConfigPath, patterns: readonly string[] | undefined): boolean {
  return patterns !== undefined && patterns.some((pattern) => isUnder(path, pattern))
}

/** Every value the pattern names in `config`, with its path; missing locations are skipped. */
export function valuesAt(config: unknown, pattern: string): { path: ConfigPath; value: unknown }[] {
  let found: { path: ConfigPath; value: unknown }[] = [{ path: [], value: config }]
  for (const token of tokens(pattern)) {
    const next: { path: ConfigPath; value: unknown }[] = []
    for (const { path, value } of found) {
      if (token === '[]') {
        if (Array.isArray(value)) value.forEach((item, index) => next.push({ path: [...path, index], value: item }))
      } else if (isRecord(value) && Object.hasOwn(value, token) && value[token] !== undefined) {
        next.push({ path: [...path, token], value: value[token] })
      }
    }
    found = next
  }
  return found
}

/** The value at `path` (undefined when anything on the way is missing). */
export function valueAt(config: unknown, path: readonly (string | number)[]): unknown {
  let value = config
  for (const part of path) {
    if (Array.isArray(value) && typeof part === 'number') value = value[part]
    else if (isRecord(value) && typeof part === 'string' && Object.hasOwn(value, part)) value = value[part]
    else return undefined
  }
  return value
}

/** The value at `path`, and whether a template string (one holding `{{`) stands at it or on the way to it. */
export function templateOnPath(config: unknown, path: readonly PropertyKey[]): boolean {
  let value = config
  for (const part of path) {
    if (typeof value === 'string') return value.includes('{{')
    if (Array.isArray(value) && typeof part === 'number') value = value[part]
    else if (isRecord(value) && typeof part === 'string' && Object.hasOwn(value, part)) value = value[part]
    else return false
  }
  return typeof value === 'string' && value.includes('{{')
}

/** A plain object as JSON makes them (not an array, not a class instance). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * Calls `onString` for every string value of `config` not under `skip` (arrays and plain objects, any
 * depth; keys are not visited) and builds a copy with what it returns. Null-prototype objects, so a
 * `__proto__` key stays an ordinary key.
 */
export function mapStrings(
  config: unknown,
  skip: readonly string[] | undefined,
  onString: (text: string, path: ConfigPath) => unknown,
  path: ConfigPath = [],
): unknown {
  if (path.length > 0 && isUnderAny(path, skip)) return config
  if (typeof config === 'string') return onString(config, path)
  if (Array.isArray(config)) return config.map((item, index) => mapStrings(item, skip, onString, [...path, index]))
  if (isRecord(config)) {
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>
    for (const [key, item] of Object.entries(config)) out[key] = mapStrings(item, skip, onString, [...path, key])
    return out
  }
  return config
}

/** Calls `onString` for every string value of `config` not under `skip`, building nothing (a look before mapStrings). */
export function visitStrings(
  config: unknown,
  skip: readonly string[] | undefined,
  onString: (text: string, path: ConfigPath) => void,
  path: ConfigPath = [],
): void {
  if (path.length > 0 && isUnderAny(path, skip)) return
  if (typeof config === 'string') onString(config, path)
  else if (Array.isArray(config)) config.forEach((item, index) => visitStrings(item, skip, onString, [...path, index]))
  else if (isRecord(config))
    for (const [key, item] of Object.entries(config)) visitStrings(item, skip, onString, [...path, key])
}
