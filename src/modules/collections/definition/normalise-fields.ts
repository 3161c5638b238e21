import { AppError } from '../../../lib/errors.js'
import { findFieldType, type DefinitionContext, type FieldDef } from '../field-types/index.js'
import { FieldDefInputSchema, type FieldDefInput } from './field-def-schema.js'
import { checkFieldName } from './names.js'

export const fieldLimit = 500

/** What `normaliseFields` needs besides the input: the collection's name and the project's other collections. */
export interface NormaliseContext {
  readonly collection: string
  /** Normalised fields of the project's collections; an entry for `collection` itself is ignored. */
  readonly collections: ReadonlyMap<string, readonly FieldDef[]>
}

/**
 * The checks of a field list that need nothing but the list (an array within the limit, each an object of
 * the definition's shape with a valid, unique name), and the drafts; the definition checks against the
 * other fields and collections come after. Throws as normaliseFields does. A blueprint's plan uses it alone.
 */
export function draftFields(input: unknown): FieldDef[] {
  if (!Array.isArray(input))
    throw new AppError('invalid_field', 'fields must be an array of field definitions', { field: null, index: null })
  if (input.length > fieldLimit) {
    throw new AppError('invalid_field', `A collection has at most ${fieldLimit} fields`, {
      field: null,
      index: fieldLimit,
    })
  }
  const drafts: FieldDef[] = []
  const seen = new Set<string>()
  input.forEach((raw: unknown, index) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      throw new AppError('invalid_field', `Field ${index} is not an object`, { field: null, index })
    }
    const name = checkFieldName((raw as { name?: unknown }).name, index)
    if (seen.has(name)) throw new AppError('duplicate_field', `Two fields are named "${name}"`, { field: name, index })
    seen.add(name)
    drafts.push(draftOf(raw, name, index))
  })
  return drafts
}

/**
 * Checks a client's field list and returns it normalised: aliases collapsed, nulls dropped, onDelete and
 * derived resultTypes filled in, defaults in their stored form. Throws AppError (400) with
 * `details: { field, index }`: invalid_name, reserved_field, duplicate_field, invalid_field.
 */
export function normaliseFields(input: unknown, context: NormaliseContext): FieldDef[] {
  const drafts = draftFields(input)
  const checkContext: DefinitionContext = {
    collection: context.collection,
    fields: drafts,
    collections: context.collections,
  }
  return drafts.map((draft, index) => {
    const type = findFieldType(draft.type)!
    const problems = type.checkDefinition(draft, checkContext)
    if (problems.length > 0) {
      throw new AppError('invalid_field', `Field "${draft.name}": ${problems[0]}`, {
        field: draft.name,
        index,
        problems,
      })
    }
    const resultType = type.deriveResultType(draft, checkContext)
    const def: FieldDef = { ...draft }
    if (resultType !== null) def.resultType = resultType
    if (def.defaultValue !== undefined) def.defaultValue = type.write(def.defaultValue, def)
    return def
  })
}

// Shape check and normalisation of one field; the definition checks come after, with every field known.
function draftOf(raw: object, name: string, index: number): FieldDef {
  const parsed = FieldDefInputSchema.safeParse(raw)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const path = issue?.path.map(String).join('.') ?? ''
    if (issue?.code === 'unrecognized_keys') {
      // The unknown property by name, the object it sits in as `path` ('' for the definition itself).
      const property = String(issue.keys[0]).slice(0, 60)
      throw new AppError(
        'invalid_field',
        `Field "${name}": unknown property "${path === '' ? '' : `${path}.`}${property}"`,
        { field: name, index, property, path },
      )
    }
    throw new AppError(
      'invalid_field',
      `Field "${name}": ${path === '' ? '' : `${path}: `}${issue?.message ?? 'invalid definition'}`,
      {
        field: name,
        index,
        path,
      },
    )
  }
  const input: FieldDefInput = parsed.data
  const type = findFieldType(input.type)
  if (!type) {
    throw new AppError('invalid_field', `Field "${name}": unknown type "${input.type.slice(0, 40)}"`, {
      field: name,
      index,
    })
  }
  const def: FieldDef = {
    name,
    type: type.type,
    required: input.required,
    unique: input.unique ?? false,
    indexed: input.indexed ?? false,
  }
  if (input.label != null) def.label = input.label
  if (input.enumValues != null) def.enumValues = input.enumValues
  if (input.defaultValue != null) def.defaultValue = input.defaultValue
  if (input.relationConfig != null) {
    const { targetCollection, relationType, displayField, onDelete } = input.relationConfig
    def.relationConfig = { targetCollection, relationType, onDelete: onDelete ?? 'set-null' }
    if (displayField !== undefined) def.relationConfig.displayField = displayField
  }
  const rules = input.validationRules == null ? {} : withoutUndefined(input.validationRules)
  if (Object.keys(rules).length > 0) def.validationRules = rules
  if (input.lookupConfig != null) def.lookupConfig = { ...input.lookupConfig }
  if (input.rollupConfig != null) def.rollupConfig = withoutUndefined(input.rollupConfig)
  if (input.translatable === true) def.translatable = true
  if (input.structure != null) def.structure = input.structure
  return def
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T
}
