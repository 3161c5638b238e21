import { defineFieldType } from './define-field-type.js'
import { invalidValue } from './field-value-error.js'
import { textColumn } from './text-like.js'

const dateShape = /^(\d{4})-(\d{2})-(\d{2})$/

/** A calendar date as YYYY-MM-DD (proleptic Gregorian); sorts and compares correctly as text. */
export function isCalendarDate(value: string): boolean {
  const match = dateShape.exec(value)
  if (!match) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}

export const dateField = defineFieldType({
  type: 'date',
  label: 'Date',
  column: (_def, dialect) => textColumn(dialect),
  valueKind: () => 'text',
  write(value, def) {
    if (typeof value !== 'string' || !isCalendarDate(value)) throw invalidValue(def.name, 'a calendar date as YYYY-MM-DD', value)
    return value
  },
  read: (value) => value,
})
