/**
 * Near misses: the allowed value (or declared key) a wrong one most likely meant. First the same text
 * up to case, surrounding whitespace and separators (`forest `, `Forest`, `rain_forest` → `rain-forest`),
 * then a small edit distance (typos: `Fores`, `Froest`). Only an unambiguous best candidate is suggested.
 */

const maxCompared = 200

function folded(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ')
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions), or Infinity beyond `limit`. */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return Infinity
  const rows = a.length + 1
  const cols = b.length + 1
  let previous2: number[] = []
  let previous = Array.from({ length: cols }, (_, j) => j)
  for (let i = 1; i < rows; i++) {
    const current = [i]
    let best = i
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, previous2[j - 2]! + 1)
      current.push(value)
      if (value < best) best = value
    }
    if (best > limit) return Infinity
    previous2 = previous
    previous = current
  }
  const distance = previous[cols - 1]!
  return distance > limit ? Infinity : distance
}

/** How far off a value may be and still count as a typo: 1 for short words, 2 from 5 characters, 3 from 12. */
function tolerance(length: number): number {
  return length < 5 ? 1 : length < 12 ? 2 : 3
}

/** The candidate `value` most likely meant, or null when none is close or two are equally close. */
export function suggest(value: string, candidates: readonly string[]): string | null {
  if (value.length === 0 || value.length > maxCompared) return null
  const key = folded(value)
  const same = candidates.filter((c) => c !== value && folded(c) === key)
  if (same.length === 1) return same[0]!
  if (same.length > 1) return null
  const limit = tolerance(value.length)
  let best: string | null = null
  let bestDistance = Infinity
  let tie = false
  for (const candidate of candidates) {
    if (candidate === value || candidate.length > maxCompared) continue
    const distance = editDistance(folded(value), folded(candidate), limit)
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
      tie = false
    } else if (distance === bestDistance && distance !== Infinity) tie = true
  }
  // A one-letter value is too short to guess from.
  if (best === null || tie || (value.trim().length <= 1 && bestDistance > 0)) return null
  return best
}
