import type {
  DefinitionContext,
  Dialect,
  FieldDef,
  FieldTypeName,
  StoredTypeName,
  ValidationRules,
  ValueKind,
} from './field-def.js'
import { FieldValueError } from './field-value-error.js'
import { checkPattern } from './safe-pattern.js'

/** Definition properties that belong to some types only. */
export type FieldOption = 'enumValues' | 'relationConfig' | 'lookupConfig' | 'rollupConfig' | 'structure'
export type RuleName = keyof ValidationRules

/** What a field type file declares; `defineFieldType` fills in the defaults and the shared checks. */
export interface FieldTypeSpec<T extends string> {
  type: T
  label: string
  aliases?: readonly string[]
  /** Never written, no column (lookup, rollup). */
  computed?: boolean
  /** Feeds full-text search. */
  searchable?: boolean
  /** May be `translatable` (a locale → value map). */
  textLike?: boolean
  /** The `validationRules` keys that apply. */
  rules?: readonly RuleName[]
  /** The type-specific definition properties it takes. */
  options?: readonly FieldOption[]
  /** The SQL column type for DDL, or null when computed. */
  column(def: FieldDef, dialect: Dialect): string | null
  valueKind(def: FieldDef): ValueKind
  /** Validates one non-null API value and returns the value to store; throws FieldValueError. */
  write(value: unknown, def: FieldDef): unknown
  /** A stored non-null value back to its API value. */
  read(value: unknown, def: FieldDef, dialect: Dialect): unknown
  /** Problems with the type-specific parts of a definition, as messages. */
  checkDefinition?(def: FieldDef, context: DefinitionContext): string[]
  /** Computed types: the type of the value, derived once `checkDefinition` found nothing. */
  deriveResultType?(def: FieldDef, context: DefinitionContext): StoredTypeName
}

/** A field type of the registry. */
export interface FieldType<T extends string = FieldTypeName> {
  readonly type: T
  readonly label: string
  readonly aliases: readonly string[]
  readonly computed: boolean
  readonly searchable: boolean
  readonly textLike: boolean
  readonly rules: readonly RuleName[]
  readonly options: readonly FieldOption[]
  column(def: FieldDef, dialect: Dialect): string | null
  valueKind(def: FieldDef): ValueKind
  /** Validates one non-null API value and returns the value to store; throws FieldValueError (invalid_field, validation_error). */
  write(value: unknown, def: FieldDef): unknown
  /** A stored value back to its API value (null stays null); never throws. */
  read(value: unknown, def: FieldDef, dialect: Dialect): unknown
  /** Every problem with the definition (shared checks and the type's own), as messages; empty when valid. */
  checkDefinition(def: FieldDef, context: DefinitionContext): string[]
  /** The derived `resultType` of a computed field (call after a clean `checkDefinition`); null for stored types. */
  deriveResultType(def: FieldDef, context: DefinitionContext): StoredTypeName | null
}

const allOptions: readonly FieldOption[] = ['enumValues', 'relationConfig', 'lookupConfig', 'rollupConfig', 'structure']

/** Builds a registry entry from a type file's declaration. */
// T is any string here, not FieldTypeName: that union is read off the registry, which holds these values.
export function defineFieldType<const T extends string>(spec: FieldTypeSpec<T>): FieldType<T> {
  const type: FieldType<T> = {
    type: spec.type,
    label: spec.label,
    aliases: spec.aliases ?? [],
    computed: spec.computed ?? false,
    searchable: spec.searchable ?? false,
    textLike: spec.textLike ?? false,
    rules: spec.rules ?? [],
    options: spec.options ?? [],
    column: spec.column,
    valueKind: spec.valueKind,
    write(value, def) {
      if (value === null || value === undefined) {
        throw new FieldValueError('invalid_field', def.name, `Field "${def.name}" must not be null`)
      }
      return spec.write(value, def)
    },
    read(value, def, dialect) {
      return value === null || value === undefined ? null : spec.read(value, def, dialect)
    },
    checkDefinition(def, context) {
      const problems = [...checkShared(type, def), ...(spec.checkDefinition?.(def, context) ?? [])]
      if (problems.length === 0 && def.defaultValue !== undefined) problems.push(...checkDefault(type, def))
      return problems
    },
    deriveResultType(def, context) {
      return spec.deriveResultType?.(def, context) ?? null
    },
  }
  return Object.freeze(type)
}

// Checks every type shares: options and rules only where they apply, nothing stored on a computed type.
function checkShared(type: FieldType<string>, def: FieldDef): string[] {
  const problems: string[] = []
  for (const option of allOptions) {
    if (def[option] !== undefined && !type.options.includes(option))
      problems.push(`${option} does not apply to type ${type.type}`)
  }
  if (def.translatable === true && !type.textLike) {
    problems.push(
      `translatable applies to text-like types only (text, richtext, email, url, phone, slug), not ${type.type}`,
    )
  }
  const rules = def.validationRules ?? {}
  for (const rule of Object.keys(rules) as RuleName[]) {
    if (!type.rules.includes(rule)) problems.push(`validationRules.${rule} does not apply to type ${type.type}`)
  }
  if (rules.minLength !== undefined && rules.maxLength !== undefined && rules.minLength > rules.maxLength) {
    problems.push('validationRules.minLength is greater than maxLength')
  }
  if (rules.min !== undefined && rules.max !== undefined && rules.min > rules.max)
    problems.push('validationRules.min is greater than max')
  if (rules.pattern !== undefined && type.rules.includes('pattern')) {
    const problem = checkPattern(rules.pattern)
    if (problem) problems.push(`validationRules.${problem}`)
  }
  if (type.computed) {
    if (def.required) problems.push(`a ${type.type} field is computed and cannot be required`)
    if (def.unique) problems.push(`a ${type.type} field is computed and cannot be unique`)
    if (def.indexed) problems.push(`a ${type.type} field is computed and cannot be indexed`)
    if (def.defaultValue !== undefined) problems.push(`a ${type.type} field is computed and cannot have a defaultValue`)
  }
  return problems
}

function checkDefault(type: FieldType<string>, def: FieldDef): string[] {
  if (type.computed) return []
  try {
    type.write(def.defaultValue, def)
    return []
  } catch (err) {
    if (err instanceof FieldValueError) return [`defaultValue is refused: ${err.message}`]
    throw err
  }
}
