import { defineFieldType } from './define-field-type.js'
import { textLike } from './text-like.js'

// Hyphen-separated runs, so the pattern cannot backtrack.
const slugShape = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

export const slugField = defineFieldType({
  type: 'slug',
  label: 'Slug',
  ...textLike({
    expected: 'a slug (lower-case letters and digits separated by single hyphens)',
    valid: (value) => slugShape.test(value),
  }),
})
