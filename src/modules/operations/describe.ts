import { z } from 'zod'
import { isRecord } from './config-paths.js'
import type { OperationDefinition } from './types.js'

/** One field of an operation's config form, derived from its schema. */
export interface FormField {
  readonly name: string
  /** string, number, integer, boolean, array, object, or any (a value of any JSON type). */
  readonly type: string
  readonly required: boolean
  readonly default?: unknown
  /** The allowed values of an enum field. */
  readonly options?: unknown[]
  /** Bounds: the value's for numbers, the length's for strings, the item count's for arrays. */
  readonly min?: number
  readonly max?: number
  readonly description?: string
}

export type JsonSchema = Record<string, unknown>

/**
 * The JSON Schema of a config as a client writes it (z.toJSONSchema, input side), with the defaults a
 * preprocessing step hides filled in from the schema itself.
 */
export function configJsonSchema(definition: OperationDefinition): JsonSchema {
  const schema = z.toJSONSchema(definition.configSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema
  const properties = isRecord(schema.properties) ? schema.properties : {}
  for (const [name, field] of Object.entries(shapeOf(definition))) {
    const property = properties[name]
    const fallback = defaultOf(field)
    if (isRecord(property) && fallback !== undefined && !('default' in property)) property.default = fallback
  }
  return schema
}

/** The form fields of an operation's config, in declaration order. */
export function formFields(
  definition: OperationDefinition,
  schema: JsonSchema = configJsonSchema(definition),
): FormField[] {
  const properties = isRecord(schema.properties) ? schema.properties : {}
  return Object.entries(shapeOf(definition)).map(([name, field]) => {
    const property = isRecord(properties[name]) ? properties[name] : {}
    const fallback = defaultOf(field)
    const out: { -readonly [K in keyof FormField]: FormField[K] } = {
      name,
      type: typeOf(property),
      required: fallback === undefined && !field.safeParse(undefined).success,
    }
    if (fallback !== undefined) out.default = fallback
    if (Array.isArray(property.enum)) out.options = property.enum
    const min = property.minimum ?? (property.minLength || undefined) ?? (property.minItems || undefined)
    const max = property.maximum ?? property.maxLength ?? property.maxItems
    if (typeof min === 'number') out.min = min
    if (typeof max === 'number') out.max = max
    if (typeof property.description === 'string') out.description = property.description
    return out
  })
}

function shapeOf(definition: OperationDefinition): Record<string, z.ZodType> {
  // Every catalog config is an object (a refined one keeps its shape).
  return (definition.configSchema as unknown as { shape?: Record<string, z.ZodType> }).shape ?? {}
}

/** What the schema fills in when the field is left out (undefined: nothing). */
function defaultOf(field: z.ZodType): unknown {
  const result = field.safeParse(undefined)
  return result.success ? result.data : undefined
}

function typeOf(property: Record<string, unknown>): string {
  if (typeof property.type === 'string') return property.type
  if (Array.isArray(property.anyOf)) {
    const types = property.anyOf.map((option) =>
      isRecord(option) && typeof option.type === 'string' ? option.type : 'any',
    )
    // The first option is the field's main type (formula: a string, or a plain number).
    if (!types.includes('any')) return types[0]!
  }
  return 'any'
}
