import { AppError } from '../errors.js'

// Every way JSON text can spell the key: each of its characters plain or as a \u escape. Only a text that
// matches is parsed a second time, so ordinary bodies pay one substring search (two when they hold \u).
const spelled =
  /(?:_|\\u005[fF]){2}(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[fF])(?:t|\\u0074)(?:o|\\u006[fF])(?:_|\\u005[fF]){2}/

function mayHold(text: string): boolean {
  return text.includes('__proto__') || (text.includes('\\u') && spelled.test(text))
}

class Found extends Error {}

/** Whether one JSON text has an object key `__proto__` at any depth; malformed JSON is left to the parser. */
function holdsKey(text: string): boolean {
  try {
    // JSON.parse makes `__proto__` an ordinary own key, and the reviver sees every key of every object.
    JSON.parse(text, (key: string, value: unknown) => {
      if (key === '__proto__') throw new Found()
      return value
    })
  } catch (err) {
    if (err instanceof Found) return true
  }
  return false
}

/**
 * Refuses a JSON body (or, with `lines`, an NDJSON body, line by line) that has an object key `__proto__`
 * anywhere. Such a key is a prototype-pollution probe, and schemas drop it silently (so a write would
 * succeed without the field); no Plinth name can be `__proto__`. Malformed JSON is not this check's to
 * report. Throws invalid_request.
 */
export function refuseProtoKey(text: string, lines = false): void {
  if (!mayHold(text)) return
  const found = lines ? text.split('\n').some((line) => mayHold(line) && holdsKey(line)) : holdsKey(text)
  if (found)
    throw new AppError('invalid_request', 'The request body must not hold a "__proto__" key', { key: '__proto__' })
}
