import { AppError } from '../../../lib/errors.js'

export type FieldValueCode = 'invalid_field' | 'validation_error'

/**
 * A value a field refuses: `invalid_field` (400) for a wrong JSON type or format, `validation_error` (422)
 * for a failed `validationRules` check. An AppError, so the HTTP layer renders it as it is; details carry
 * the field name and, for rule failures, the rule.
 */
export class FieldValueError extends AppError {
  override name = 'FieldValueError'
  declare readonly code: FieldValueCode
  constructor(
    code: FieldValueCode,
    readonly field: string,
    message: string,
    readonly rule?: string,
  ) {
    super(code, message, rule === undefined ? { field } : { field, rule })
  }
}

const previewChars = 40

/** A short, safe rendering of a refused value for messages: never more than ~60 characters. */
export function preview(value: unknown): string {
  if (typeof value === 'string') {
    const shown = JSON.stringify(value.slice(0, previewChars)).slice(0, 60)
    return value.length > previewChars ? `${shown}…` : shown
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object'
  return `a ${typeof value}`
}

/** An invalid_field error: `expected` completes "must be …"; `where` narrows it (e.g. "(locale de)"). */
export function invalidValue(field: string, expected: string, value: unknown, where = ''): FieldValueError {
  return new FieldValueError(
    'invalid_field',
    field,
    `${subject(field, where)} must be ${expected}, got ${preview(value)}`,
  )
}

/** A validation_error for one failed rule; `message` completes "Field "x" …". */
export function ruleFailed(field: string, rule: string, message: string, where = ''): FieldValueError {
  return new FieldValueError('validation_error', field, `${subject(field, where)} ${message}`, rule)
}

function subject(field: string, where: string): string {
  return where === '' ? `Field "${field}"` : `Field "${field}" ${where}`
}
