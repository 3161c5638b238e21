/**
 * A brick fence's info string: `service:<kind> id=<brickId> [needs=a,b] [title="quoted text"]`. Values may
 * be quoted (`\"` and `\\` escape inside the quotes) or bare (up to the next space).
 */

/** Brick ids: what `needs` and an assembly's `bricks` name (decision 068). */
export const brickIdPattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/

export const brickPrefix = 'service:'

export interface BrickInfo {
  readonly kind: string
  readonly id: string | null
  readonly needs: readonly string[]
  readonly title: string | null
}

export type InfoRead = { ok: true; info: BrickInfo } | { ok: false; kind: string; id: string | null; problem: string }

const attributes = new Set(['id', 'needs', 'title'])

/** Reads an info string that starts with `service:`; a problem names what is wrong with it. */
export function readInfoString(info: string): InfoRead {
  const rest = info.slice(brickPrefix.length)
  const kindEnd = rest.search(/\s|$/)
  const kind = rest.slice(0, kindEnd)
  const values = new Map<string, string>()
  let i = kindEnd
  const fail = (problem: string): InfoRead => {
    const id = values.get('id')
    return { ok: false, kind, id: id !== undefined && brickIdPattern.test(id) ? id : null, problem }
  }
  while (i < rest.length) {
    while (i < rest.length && /\s/.test(rest[i]!)) i++
    if (i >= rest.length) break
    const key = /^[A-Za-z][\w-]*/.exec(rest.slice(i, i + 40))?.[0]
    if (!key || rest[i + key.length] !== '=')
      return fail(`expected name=value at ${JSON.stringify(rest.slice(i, i + 20))}`)
    if (!attributes.has(key)) return fail(`unknown attribute ${key} (id, needs, title)`)
    if (values.has(key)) return fail(`${key} is given twice`)
    i += key.length + 1
    let value = ''
    if (rest[i] === '"') {
      i++
      let closed = false
      while (i < rest.length) {
        const c = rest[i]!
        if (c === '\\' && (rest[i + 1] === '"' || rest[i + 1] === '\\')) {
          value += rest[i + 1]
          i += 2
        } else if (c === '"') {
          closed = true
          i++
          break
        } else {
          value += c
          i++
        }
      }
      if (!closed) return fail(`the quoted ${key} never closes`)
      if (i < rest.length && !/\s/.test(rest[i]!)) return fail(`a space must follow the quoted ${key}`)
    } else {
      const end = rest.slice(i).search(/\s|$/)
      value = rest.slice(i, i + end)
      i += end
    }
    values.set(key, value)
  }
  const id = values.get('id') ?? null
  if (id !== null && !brickIdPattern.test(id)) {
    return fail(`the id ${JSON.stringify(id.slice(0, 80))} is not a brick id (letters, digits, _ . -; at most 64)`)
  }
  const needsText = values.get('needs')
  const needs = needsText === undefined ? [] : needsText.split(',').map((n) => n.trim())
  const badNeed = needs.find((n) => !brickIdPattern.test(n))
  if (badNeed !== undefined) return fail(`needs names ${JSON.stringify(badNeed.slice(0, 80))}, which is not a brick id`)
  const title = values.get('title') ?? null
  if (title !== null && title.length > 200) return fail('the title is over 200 characters')
  return { ok: true, info: { kind, id, needs: [...new Set(needs)], title } }
}
