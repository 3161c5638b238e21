import type { FieldDef } from './field-def.js'

export const enumLimits = { values: 1000, valueChars: 200 } as const

/** Problems with `enumValues` (enum and multi_enum): required, non-empty, unique non-empty strings. */
export function checkEnumValues(def: FieldDef): string[] {
  const values = def.enumValues
  if (values === undefined || values.length === 0) return [`type ${def.type} needs a non-empty enumValues list`]
  if (values.length > enumLimits.values) return [`enumValues may hold at most ${enumLimits.values} values`]
  const problems: string[] = []
  const seen = new Set<string>()
  for (const value of values) {
    if (typeof value !== 'string' || value.length === 0 || value.length > enumLimits.valueChars) {
      problems.push(`enumValues must be strings of 1 to ${enumLimits.valueChars} characters`)
      break
    }
    if (seen.has(value)) {
      problems.push(`enumValues lists "${value.slice(0, 40)}" twice`)
      break
    }
    seen.add(value)
  }
  return problems
}

/** "one of a, b, c" for messages, cut short on long lists. */
export function describeChoices(def: FieldDef): string {
  const values = def.enumValues ?? []
  const shown = values.slice(0, 10).map((v) => JSON.stringify(v.slice(0, 40)))
  return `one of ${shown.join(', ')}${values.length > 10 ? ', …' : ''}`
}
