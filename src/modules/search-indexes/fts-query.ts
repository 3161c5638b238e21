import { AppError } from '../../lib/errors.js'

/**
 * A user's search text as an FTS5 expression that cannot be an FTS5 syntax error: every word and every
 * "quoted phrase" becomes a double-quoted FTS5 string (quotes inside doubled), a trailing `*` on a word a
 * prefix search, and all of them must match (FTS5's implicit AND). FTS5's own operators (AND, OR, NOT,
 * NEAR, column filters, parentheses, ^) are words like any other, and a control character separates
 * words (FTS5 reads a NUL inside a string as its end). Throws invalid_request for an unbalanced quote or
 * a text with no word in it.
 */
export function ftsExpression(text: string): string {
  const terms: string[] = []
  // eslint-disable-next-line no-control-regex -- control characters are what is taken out
  let rest = text.replace(/[\u0000-\u001f\u007f]/g, ' ')
  while (rest.length > 0) {
    rest = rest.replace(/^\s+/, '')
    if (rest.length === 0) break
    if (rest.startsWith('"')) {
      const end = rest.indexOf('"', 1)
      if (end < 0) throw new AppError('invalid_request', 'q: a quote is opened and never closed', { field: 'q' })
      const phrase = rest.slice(1, end)
      rest = rest.slice(end + 1)
      const prefix = rest.startsWith('*')
      if (prefix) rest = rest.slice(1)
      if (hasWord(phrase)) terms.push(quoted(phrase) + (prefix ? ' *' : ''))
      continue
    }
    const match = /^[^\s"]+/.exec(rest)!
    rest = rest.slice(match[0].length)
    let word = match[0]
    const prefix = word.length > 1 && word.endsWith('*')
    if (prefix) word = word.replace(/\*+$/, '')
    if (hasWord(word)) terms.push(quoted(word) + (prefix ? ' *' : ''))
  }
  if (terms.length === 0)
    throw new AppError('invalid_request', 'q: give at least one word to search for', { field: 'q' })
  return terms.join(' ')
}

/** The expression limited to some columns of the FTS5 table (their names are ours: c0, c1, …). */
export function inColumns(columns: readonly string[], expression: string): string {
  return `{${columns.join(' ')}} : (${expression})`
}

function hasWord(text: string): boolean {
  return /[\p{L}\p{N}]/u.test(text)
}

function quoted(text: string): string {
  return `"${text.replaceAll('"', '""')}"`
}
