import { z } from 'zod'
import { patternLimits } from '../field-types/index.js'
import { parseStructure } from '../field-types/structure.js'

/**
 * A field definition as clients send it (POST and PATCH /collections). Options a type does not take may be
 * null (treated as absent). Unknown keys are refused everywhere, at the top level as inside the config
 * objects and `validationRules`, so a typo (`uniqe`) cannot silently change behaviour. Every property GET
 * returns is known, so a definition read from GET can be sent back as it is: `resultType`, output only, is
 * accepted and ignored (the server derives it). Names and types are checked by `normaliseFields`, which
 * gives them their own codes.
 */
const lengthRule = z.number().int().min(0).max(10_000_000)

export const ValidationRulesSchema = z.strictObject({
  minLength: lengthRule.optional(),
  maxLength: lengthRule.optional(),
  min: z.number().optional(),
  max: z.number().optional(),
  pattern: z.string().min(1).max(patternLimits.sourceChars).optional(),
})

const name = z.string().min(1).max(50)

export const RelationConfigSchema = z.strictObject({
  targetCollection: name.describe('A collection of the project, or "users": the project\'s users (decision 061)'),
  relationType: z.enum(['belongsTo', 'hasMany']),
  displayField: name.optional(),
  onDelete: z.enum(['set-null', 'cascade', 'restrict']).optional(),
})

export const LookupConfigSchema = z.strictObject({
  relationField: name,
  targetField: name,
})

export const RollupConfigSchema = z.strictObject({
  relationField: name,
  function: z.enum(['count', 'sum', 'avg', 'min', 'max']),
  targetField: name.optional(),
})

/** A json field's `structure` (addendum §4), checked and normalised; a problem names its path below `structure`. */
export const StructureInputSchema = z.unknown().transform((input, ctx) => {
  if (input === null || input === undefined) return null
  const parsed = parseStructure(input)
  if (parsed.ok) return parsed.structure
  ctx.addIssue({ code: 'custom', message: parsed.message, path: parsed.path })
  return z.NEVER
})

export const FieldDefInputSchema = z.strictObject({
  name: z.string(),
  type: z.string(),
  required: z.boolean(),
  unique: z.boolean().nullish(),
  indexed: z.boolean().nullish(),
  label: z.string().max(200).nullish(),
  enumValues: z.array(z.string()).nullish(),
  defaultValue: z.unknown().optional(),
  relationConfig: RelationConfigSchema.nullish(),
  validationRules: ValidationRulesSchema.nullish(),
  lookupConfig: LookupConfigSchema.nullish(),
  rollupConfig: RollupConfigSchema.nullish(),
  translatable: z.boolean().nullish(),
  structure: StructureInputSchema.optional(),
  /** Output only (derived for lookup and rollup): accepted so GET's definitions round-trip, then ignored. */
  resultType: z.unknown().optional(),
})

export type FieldDefInput = z.infer<typeof FieldDefInputSchema>
