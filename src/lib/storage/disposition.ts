/**
 * A Content-Disposition value naming the file (RFC 6266): an ASCII `filename` fallback for old clients
 * and the exact name as UTF-8 in `filename*` (RFC 8187). Throws nothing.
 */
export function contentDisposition(filename: string, type: 'attachment' | 'inline' = 'attachment'): string {
  // Quotes, backslashes, control characters and non-ASCII have no safe spelling in the quoted fallback.
  // eslint-disable-next-line no-control-regex
  const fallback = filename.replace(/[\u0000-\u001f\u007f"\\]/g, '_').replace(/[^\x20-\x7e]/g, '_')
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  )
  return fallback === filename && filename !== ''
    ? `${type}; filename="${filename}"`
    : `${type}; filename="${fallback || 'download'}"; filename*=UTF-8''${encoded}`
}
