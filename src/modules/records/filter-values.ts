import type { FieldPath, FieldResolver, FieldValues, ResolvedField } from '../../lib/filter/index.js'
import type { FieldDef } from '../collections/index.js'

/**
 * A collection's resolver with the values a filter may compare each field with, where the column kind
 * says too little, so that `checkFilter` refuses a value the field can never hold: a date takes
 * YYYY-MM-DD, an enum its choices, a translatable field text (it is kept as a JSON map of locales). Other
 * fields take what their column holds (datetime: Unix seconds); paths into JSON take anything. Throws what
 * the resolver throws.
 */
export function withFieldValues(resolver: FieldResolver, fields: readonly FieldDef[]): FieldResolver {
  const byName = new Map(fields.map((f) => [f.name, f]))
  return {
    resolve(path: FieldPath): ResolvedField {
      const resolved = resolver.resolve(path)
      const def = path.length === 1 ? byName.get(path[0]) : undefined
      const values = def ? declaredValues(def) : undefined
      return values ? { ...resolved, values } : resolved
    },
  }
}

function declaredValues(def: FieldDef): FieldValues | undefined {
  if (def.translatable === true) return { kind: 'string' }
  if (def.type === 'date') return { kind: 'string', format: 'date' }
  if (def.type === 'enum') return { kind: 'string', choices: def.enumValues ?? [] }
  return undefined
}
