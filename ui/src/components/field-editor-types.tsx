/**
 * The 21 field types as the server's registry declares them (src/modules/collections/field-types/): each
 * one's label, which options and validation rules it takes, and the groups a type may change within
 * (docs/collections.md "Types, rules, unique, relations"). The schema screens read only this table.
 */

export type RelationType = 'belongsTo' | 'hasMany'
export type OnDelete = 'set-null' | 'cascade' | 'restrict'
export type RollupFunction = 'count' | 'sum' | 'avg' | 'min' | 'max'

export interface ValidationRules {
  minLength?: number
  maxLength?: number
  min?: number
  max?: number
  pattern?: string
}

/** A field definition as the API sends and takes it. */
export interface FieldDef {
  name: string
  type: string
  required: boolean
  unique?: boolean
  indexed?: boolean
  label?: string
  enumValues?: string[]
  defaultValue?: unknown
  relationConfig?: { targetCollection: string; relationType: RelationType; displayField?: string; onDelete?: OnDelete }
  validationRules?: ValidationRules
  lookupConfig?: { relationField: string; targetField: string }
  rollupConfig?: { relationField: string; function: RollupFunction; targetField?: string }
  translatable?: boolean
  structure?: unknown
  resultType?: string
}

export interface CompoundIndex {
  name?: string
  fields: string[]
  unique: boolean
}

export type AccessPreset = 'team' | 'private' | 'public'

/** A collection as GET /api/v1/collections answers it. */
export interface CollectionDef {
  id: string
  name: string
  storageType: string
  databaseId: string
  schemaVersion: number
  fields: FieldDef[]
  indexes: CompoundIndex[]
  accessControl: { preset: AccessPreset; sharing?: boolean } | null
  createdAt: number
  updatedAt: number
}

type Rule = keyof ValidationRules
type Option = 'enumValues' | 'relationConfig' | 'lookupConfig' | 'rollupConfig' | 'structure'

export interface FieldTypeInfo {
  readonly type: string
  readonly label: string
  readonly group: 'Text' | 'Numbers' | 'Dates' | 'Choices' | 'Other' | 'Computed'
  readonly textLike?: boolean
  readonly computed?: boolean
  readonly rules?: readonly Rule[]
  readonly option?: Option
  /** The types it may change to on an existing field (its convertible group). */
  readonly converts?: 'strings' | 'numbers'
  readonly hint: string
}

const textRules: readonly Rule[] = ['minLength', 'maxLength', 'pattern']
const numberRules: readonly Rule[] = ['min', 'max']

/** Every field type, in the registry's order. */
export const fieldTypes: readonly FieldTypeInfo[] = [
  {
    type: 'text',
    label: 'Text',
    group: 'Text',
    textLike: true,
    rules: textRules,
    converts: 'strings',
    hint: 'A string; searchable.',
  },
  {
    type: 'richtext',
    label: 'Rich text',
    group: 'Text',
    textLike: true,
    rules: textRules,
    converts: 'strings',
    hint: 'Formatted text; searchable.',
  },
  {
    type: 'email',
    label: 'Email',
    group: 'Text',
    textLike: true,
    rules: textRules,
    converts: 'strings',
    hint: 'An email address.',
  },
  {
    type: 'url',
    label: 'URL',
    group: 'Text',
    textLike: true,
    rules: textRules,
    converts: 'strings',
    hint: 'An absolute http or https URL.',
  },
  {
    type: 'phone',
    label: 'Phone',
    group: 'Text',
    textLike: true,
    rules: textRules,
    converts: 'strings',
    hint: 'A phone number (3 to 15 digits).',
  },
  {
    type: 'slug',
    label: 'Slug',
    group: 'Text',
    textLike: true,
    rules: textRules,
    converts: 'strings',
    hint: 'Lower-case words joined by hyphens.',
  },
  { type: 'uuid', label: 'UUID', group: 'Text', converts: 'strings', hint: 'Stored lower-case with hyphens.' },
  {
    type: 'integer',
    label: 'Integer',
    group: 'Numbers',
    rules: numberRules,
    converts: 'numbers',
    hint: 'A whole number.',
  },
  {
    type: 'decimal',
    label: 'Decimal',
    group: 'Numbers',
    rules: numberRules,
    converts: 'numbers',
    hint: 'An exact number (NUMERIC).',
  },
  {
    type: 'number',
    label: 'Number',
    group: 'Numbers',
    rules: numberRules,
    converts: 'numbers',
    hint: 'A double-precision number.',
  },
  { type: 'boolean', label: 'Boolean', group: 'Other', hint: 'True or false.' },
  { type: 'date', label: 'Date', group: 'Dates', hint: 'A calendar date, YYYY-MM-DD.' },
  { type: 'datetime', label: 'Date and time', group: 'Dates', hint: 'A moment, in Unix seconds.' },
  {
    type: 'enum',
    label: 'Choice (enum)',
    group: 'Choices',
    option: 'enumValues',
    converts: 'strings',
    hint: 'One of a list of values.',
  },
  {
    type: 'multi_enum',
    label: 'Multiple choice',
    group: 'Choices',
    option: 'enumValues',
    hint: 'A list of values from a list, no repeats.',
  },
  { type: 'json', label: 'JSON', group: 'Other', option: 'structure', hint: 'Any JSON; an optional structure.' },
  {
    type: 'relation',
    label: 'Relation',
    group: 'Other',
    option: 'relationConfig',
    hint: 'Points at records of a collection, or at users.',
  },
  { type: 'file', label: 'File', group: 'Other', hint: 'A file id.' },
  { type: 'geo', label: 'Location (geo)', group: 'Other', hint: 'A GeoJSON geometry.' },
  {
    type: 'lookup',
    label: 'Lookup',
    group: 'Computed',
    computed: true,
    option: 'lookupConfig',
    hint: 'A field of the record a belongsTo relation points at.',
  },
  {
    type: 'rollup',
    label: 'Rollup',
    group: 'Computed',
    computed: true,
    option: 'rollupConfig',
    hint: 'A count, sum, average, minimum or maximum over a hasMany relation.',
  },
]

export const typeGroups = ['Text', 'Numbers', 'Dates', 'Choices', 'Other', 'Computed'] as const

/** The registry entry of a type name (`jsonb` is `json`); a stand-in for a name this UI does not know. */
export function typeInfo(type: string): FieldTypeInfo {
  const name = type === 'jsonb' ? 'json' : type
  return fieldTypes.find((t) => t.type === name) ?? { type, label: type, group: 'Other', hint: '' }
}

/** The types an existing field of this type may take: its own and those of its convertible group. */
export function typesReachableFrom(type: string): readonly FieldTypeInfo[] {
  const from = typeInfo(type)
  if (!from.converts) return [from]
  return fieldTypes.filter((t) => t.converts === from.converts)
}

/** Names a field may have: a lower-case letter, then up to 49 lower-case letters, digits or `_`. */
export const namePattern = /^[a-z][a-z0-9_]{0,49}$/

/** The system columns a compound index may name besides fields. */
export const indexableSystemColumns = ['created_at', 'updated_at', 'created_by', 'updated_by', 'owned_by'] as const

/** A field with only the options its type takes, empty ones left out: what is sent to the server. */
export function cleanField(field: FieldDef): FieldDef {
  const info = typeInfo(field.type)
  const out: FieldDef = { name: field.name, type: field.type, required: info.computed ? false : field.required }
  if (!info.computed) {
    if (field.unique) out.unique = true
    if (field.indexed) out.indexed = true
    if (field.defaultValue !== undefined) out.defaultValue = field.defaultValue
  }
  if (field.label) out.label = field.label
  if (info.textLike && field.translatable) out.translatable = true
  if (info.option === 'enumValues') out.enumValues = field.enumValues ?? []
  if (info.option === 'relationConfig' && field.relationConfig) {
    const { displayField, onDelete, ...rest } = field.relationConfig
    out.relationConfig = { ...rest, ...(displayField ? { displayField } : {}), ...(onDelete ? { onDelete } : {}) }
  }
  if (info.option === 'lookupConfig' && field.lookupConfig) out.lookupConfig = field.lookupConfig
  if (info.option === 'rollupConfig' && field.rollupConfig) {
    const { targetField, ...rest } = field.rollupConfig
    out.rollupConfig = { ...rest, ...(targetField ? { targetField } : {}) }
  }
  if (info.option === 'structure' && field.structure !== undefined && field.structure !== null)
    out.structure = field.structure
  const rules: ValidationRules = {}
  for (const rule of info.rules ?? []) {
    const value = field.validationRules?.[rule]
    if (value !== undefined && value !== '') (rules as Record<string, unknown>)[rule] = value
  }
  if (Object.keys(rules).length > 0) out.validationRules = rules
  return out
}

/** A short description of a field's options, for the field list. */
export function describeOptions(field: FieldDef): string {
  const parts: string[] = []
  if (field.enumValues) parts.push(`values: ${field.enumValues.join(', ')}`)
  const r = field.relationConfig
  if (r) parts.push(`${r.relationType} ${r.targetCollection}${r.onDelete ? `, on delete ${r.onDelete}` : ''}`)
  if (field.lookupConfig) parts.push(`${field.lookupConfig.relationField}.${field.lookupConfig.targetField}`)
  const u = field.rollupConfig
  if (u) parts.push(`${u.function}(${u.relationField}${u.targetField ? `.${u.targetField}` : ''})`)
  const rules = field.validationRules
  if (rules) for (const [k, v] of Object.entries(rules)) parts.push(`${k} ${String(v)}`)
  if (field.defaultValue !== undefined) parts.push(`default ${JSON.stringify(field.defaultValue)}`)
  if (field.translatable) parts.push('translatable')
  if (field.structure) parts.push('structure')
  return parts.join('; ')
}
