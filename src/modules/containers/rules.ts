import { AppError } from '../../lib/errors.js'
import type { ContainerDefinition } from './schemas.js'

/** Limits of a container (docs/containers.md). */
export const containerLimits = {
  maxName: 100,
  maxImageSizes: 8,
  minSize: 16,
  maxSize: 4096,
  maxTypes: 50,
  /** core-api § Limits: 100 MB per file. */
  maxFileBytes: 100 * 1024 * 1024,
} as const

const sizeName = /^[a-z][a-z0-9_-]{0,31}$/
// Each segment a plain name (no `.` or `..` alone), so a prefix never leaves the project's part of storage.
const prefixSegment = /^[a-z0-9][a-z0-9_.-]{0,62}$/
const mediaType = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/(?:\*|[a-z0-9][a-z0-9!#$&^_.+-]{0,63})$/
const bucket = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/

const invalid = (at: string, message: string) => new AppError('validation_error', `${at}: ${message}`, { at })

/**
 * Checks a whole definition (create, or update merged over the stored one); the first problem is 422
 * validation_error with its path in details.at. The storage connection's existence is the service's.
 */
export function checkDefinition(input: ContainerDefinition & { name: string }): void {
  const name = input.name.trim()
  if (name === '' || name.length > containerLimits.maxName)
    throw invalid('name', `1 to ${containerLimits.maxName} characters`)
  if (input.prefix !== '' && !input.prefix.split('/').every((s) => prefixSegment.test(s)))
    throw invalid(
      'prefix',
      'segments of lower-case letters, digits, ., - or _, separated by /, no leading or trailing /',
    )
  if (input.prefix.length > 200) throw invalid('prefix', 'at most 200 characters')
  // A 32-hex segment would read as a file id in a file's key (files/content.ts parses keys by it).
  if (input.prefix.split('/').some((s) => /^[0-9a-f]{32}$/.test(s)))
    throw invalid('prefix', 'a segment may not be 32 hexadecimal digits (it would read as a file id)')
  if (input.bucketName !== null) {
    if (input.storageConnectionId === null)
      throw invalid('bucketName', "a bucket is named only with a storage connection (the instance's storage has one)")
    if (!bucket.test(input.bucketName))
      throw invalid('bucketName', 'a bucket name (3-63 lower-case letters, digits, . or -)')
  }
  if (input.imageSizes.length > containerLimits.maxImageSizes)
    throw invalid('imageSizes', `at most ${containerLimits.maxImageSizes} sizes`)
  const seen = new Set<string>(['thumbnail', 'original'])
  input.imageSizes.forEach((size, i) => {
    if (!sizeName.test(size.name) || seen.has(size.name))
      throw invalid(
        `imageSizes[${i}].name`,
        'a lower-case name (letter first, at most 32), once, not "thumbnail" or "original"',
      )
    seen.add(size.name)
    if (!Number.isInteger(size.size) || size.size < containerLimits.minSize || size.size > containerLimits.maxSize)
      throw invalid(
        `imageSizes[${i}].size`,
        `whole pixels from ${containerLimits.minSize} to ${containerLimits.maxSize}`,
      )
  })
  if (
    input.maxFileBytes !== null &&
    (!Number.isInteger(input.maxFileBytes) ||
      input.maxFileBytes < 1 ||
      input.maxFileBytes > containerLimits.maxFileBytes)
  )
    throw invalid('maxFileBytes', `whole bytes from 1 to ${containerLimits.maxFileBytes}, or null`)
  if (input.allowedTypes.length > containerLimits.maxTypes)
    throw invalid('allowedTypes', `at most ${containerLimits.maxTypes} types`)
  input.allowedTypes.forEach((type, i) => {
    if (!mediaType.test(type))
      throw invalid(`allowedTypes[${i}]`, 'a lower-case media type such as image/png or image/*')
  })
}

/** Whether a container's allowedTypes accept a media type (its essence, lower case); [] accepts any. */
export function acceptsType(allowedTypes: readonly string[], mimeType: string): boolean {
  if (allowedTypes.length === 0) return true
  const essence = mimeType.split(';')[0]!.trim().toLowerCase()
  const major = essence.split('/')[0]
  return allowedTypes.some((t) => t === essence || t === `${major}/*`)
}
