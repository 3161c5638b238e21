/**
 * Late-bound references: a value that stands for another brick's resource, known only once that brick is
 * installed: a string starting with `@ref` (`"@ref:tickets-lens"`) or an object with an `@ref` key
 * (`{ "@ref": "tickets-lens" }`). The records and attachment kinds refuse them (decision 068).
 */
export function isLateBound(value: unknown): boolean {
  if (typeof value === 'string') return value.startsWith('@ref')
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, '@ref')
}

/** Whether a late-bound reference appears anywhere in a value (walked with a stack of its own). */
export function holdsLateBound(value: unknown): boolean {
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const item = stack.pop()
    if (isLateBound(item)) return true
    // One push per element: spreading a long array into push() overflows the argument limit.
    if (Array.isArray(item)) for (const element of item) stack.push(element)
    else if (item !== null && typeof item === 'object') for (const child of Object.values(item)) stack.push(child)
  }
  return false
}
