/** Bounds on a filter, so that a request cannot make parsing, compiling or the query itself expensive. */
export const filterLimits = Object.freeze({
  /** Nested `_and`/`_or` levels. */
  maxDepth: 8,
  /** Comparisons in one filter. */
  maxConditions: 100,
  /** UTF-8 bytes of a filter that arrives as a JSON string. */
  maxJsonBytes: 16 * 1024,
  /** Values of one `_in`/`_nin`/`in` list. */
  maxListValues: 500,
  /** Characters of one string value (a filter given as a value skips the JSON bound). */
  maxStringLength: 4096,
  /** Segments of a dotted field name: the column and keys inside its JSON value. */
  maxPathSegments: 8,
})
