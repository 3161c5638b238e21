import { defineFieldType } from './define-field-type.js'
import { textLike } from './text-like.js'

export const urlMaxChars = 2048

// http and https only: a stored `javascript:` URL would be a script waiting for a client to render it.
// Whitespace is refused outright because the URL parser silently strips some of it.
function isWebUrl(value: string): boolean {
  if (value.length > urlMaxChars || /\s/.test(value)) return false
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

export const urlField = defineFieldType({
  type: 'url',
  label: 'URL',
  ...textLike({ expected: 'an absolute http or https URL', valid: isWebUrl }),
})
