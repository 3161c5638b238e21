/**
 * One byte range of a `Range` header (`bytes=a-b`, `bytes=a-`, `bytes=-n`) within `size`, or null to answer
 * with the whole object: no header, several ranges, or one that cannot be satisfied (RFC 9110 lets a server
 * ignore Range). Throws nothing.
 */
export function byteRange(header: string | undefined, size: number): { start: number; end: number } | null {
  const match = header === undefined ? null : /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim())
  if (!match || size === 0) return null
  const [, from = '', to = ''] = match
  if (from === '' && to === '') return null
  if (from === '') {
    const suffix = Number(to)
    if (suffix === 0) return null
    return { start: Math.max(size - suffix, 0), end: size - 1 }
  }
  const start = Number(from)
  const end = to === '' ? size - 1 : Math.min(Number(to), size - 1)
  return start <= end && start < size ? { start, end } : null
}

// Types a browser only displays (or hands to a viewer): everything else is served in a sandbox.
const passive =
  /^(?:image\/(?!svg)[\w.+-]+|audio\/[\w.+-]+|video\/[\w.+-]+|application\/pdf|text\/plain|application\/octet-stream)(?:;|$)/i

/** Whether a stored type could run script if opened as a page (HTML, SVG, XML, unknown types). Throws nothing. */
export function sandboxed(contentType: string): boolean {
  return !passive.test(contentType.trim())
}
