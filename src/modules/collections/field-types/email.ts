import { defineFieldType } from './define-field-type.js'
import { textLike } from './text-like.js'

// Deliberately loose (local@domain.tld, no spaces, RFC 5321 lengths): deliverability is not decidable here.
// Labels exclude dots, so the pattern cannot backtrack.
const emailShape = /^[^\s@]{1,64}@[^\s@.]+(?:\.[^\s@.]+)+$/

export const emailField = defineFieldType({
  type: 'email',
  label: 'Email',
  ...textLike({ expected: 'an email address', valid: (value) => value.length <= 254 && emailShape.test(value) }),
})
