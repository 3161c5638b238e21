import type { Dialect, FieldDef, ValueKind } from './field-def.js'
import { decodeJson } from './decode.js'
import type { FieldTypeSpec, RuleName } from './define-field-type.js'
import { invalidValue, ruleFailed } from './field-value-error.js'
import { isPlainObject } from './json-value.js'
import { matchesPattern, patternLimits } from './safe-pattern.js'

/**
 * The behaviour the six text-like types share (text, richtext, email, url, phone, slug): a string checked
 * against the type's format and `validationRules`, or with `translatable: true` a locale → string map
 * whose every value is checked the same way.
 */
export interface TextFormat {
  /** Completes "must be …". */
  expected: string
  valid(value: string): boolean
}

export const textRules: readonly RuleName[] = ['minLength', 'maxLength', 'pattern']
export const localeLimit = 100
const localePattern = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8}){0,4}$/

type TextLikeParts = Pick<
  FieldTypeSpec<'text'>,
  'textLike' | 'searchable' | 'rules' | 'column' | 'valueKind' | 'write' | 'read'
>

/** The spec parts of a text-like type with the given format. */
export function textLike(format: TextFormat): TextLikeParts {
  const writeOne = (value: unknown, def: FieldDef, where = ''): string => {
    if (typeof value !== 'string' || !format.valid(value)) throw invalidValue(def.name, format.expected, value, where)
    checkTextRules(value, def, where)
    return value
  }
  return {
    textLike: true,
    searchable: true,
    rules: textRules,
    column: (def: FieldDef, dialect: Dialect) => (def.translatable ? jsonColumn(dialect) : textColumn(dialect)),
    valueKind: (def: FieldDef): ValueKind => (def.translatable ? 'json' : 'text'),
    write(value, def) {
      if (def.translatable !== true) return writeOne(value, def)
      if (!isPlainObject(value))
        throw invalidValue(def.name, 'an object of locale → text (the field is translatable)', value)
      const entries = Object.entries(value)
      if (entries.length > localeLimit) throw invalidValue(def.name, `at most ${localeLimit} locales`, value)
      const out: Record<string, string> = {}
      for (const [locale, text] of entries) {
        if (locale.length > 35 || !localePattern.test(locale))
          throw invalidValue(def.name, 'keyed by BCP-47 locales', locale)
        out[locale] = writeOne(text, def, `(locale ${locale})`)
      }
      return out
    },
    read: (value, def, dialect) => (def.translatable ? decodeJson(value, dialect) : value),
  }
}

/** minLength and maxLength in characters (code points), then the pattern; throws validation_error. */
export function checkTextRules(value: string, def: FieldDef, where = ''): void {
  const rules = def.validationRules
  if (!rules) return
  const length = countChars(value)
  if (rules.minLength !== undefined && length < rules.minLength) {
    throw ruleFailed(def.name, 'minLength', `must be at least ${rules.minLength} characters long`, where)
  }
  if (rules.maxLength !== undefined && length > rules.maxLength) {
    throw ruleFailed(def.name, 'maxLength', `must be at most ${rules.maxLength} characters long`, where)
  }
  if (rules.pattern !== undefined) {
    if (length > patternLimits.inputChars) {
      throw ruleFailed(
        def.name,
        'pattern',
        `is too long to check against its pattern (over ${patternLimits.inputChars} characters)`,
        where,
      )
    }
    if (!matchesPattern(rules.pattern, value))
      throw ruleFailed(def.name, 'pattern', 'does not match its pattern', where)
  }
}

/** Code points, so an emoji counts once. */
export function countChars(value: string): number {
  let n = 0
  for (const _ of value) n += 1
  return n
}

export const textColumn = (dialect: Dialect): string => (dialect === 'sqlite' ? 'TEXT' : 'text')
export const jsonColumn = (dialect: Dialect): string => (dialect === 'sqlite' ? 'TEXT' : 'jsonb')
