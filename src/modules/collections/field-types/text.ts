import { defineFieldType } from './define-field-type.js'
import { textLike } from './text-like.js'

export const textField = defineFieldType({
  type: 'text',
  label: 'Text',
  ...textLike({ expected: 'a string', valid: () => true }),
})
