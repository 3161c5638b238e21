import { defineFieldType } from './define-field-type.js'
import { textLike } from './text-like.js'

// Written forms people use (+44 20 7946 0958, (555) 123-4567), kept as given; 3 to 15 digits as in E.164.
const phoneShape = /^\+?[\d ()./-]{3,32}$/

function isPhone(value: string): boolean {
  if (!phoneShape.test(value)) return false
  const digits = value.replace(/\D/g, '').length
  return digits >= 3 && digits <= 15
}

export const phoneField = defineFieldType({
  type: 'phone',
  label: 'Phone',
  ...textLike({ expected: 'a phone number (digits, spaces, + ( ) . / -; 3 to 15 digits)', valid: isPhone }),
})
