import { defineFieldType } from './define-field-type.js'
import { textLike } from './text-like.js'

/** Rich text (HTML or Markdown) kept as written; rendering it safely is the client's job. */
export const richtextField = defineFieldType({
  type: 'richtext',
  label: 'Rich text',
  ...textLike({ expected: 'a string', valid: () => true }),
})
