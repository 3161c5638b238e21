import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { AppError } from '../errors.js'
import { deriveKey } from './derive-key.js'

export interface SecretBox {
  /** Encrypts a secret into `v1.<iv>.<tag>.<ciphertext>` (base64url). */
  seal(plaintext: string): string
  /** Decrypts a sealed value; throws internal when it was tampered with or sealed under another key or purpose. */
  open(sealed: string): string
}

const version = 'v1'
const ivBytes = 12
const tagBytes = 16
// The version is authenticated too, so a value cannot be relabelled as a later format.
const aad = Buffer.from(version)
const base64url = /^[A-Za-z0-9_-]*$/

/**
 * AES-256-GCM encryption of secrets at rest under a key derived from SECRET_KEY for one purpose.
 * Throws internal when the secret key is under 32 bytes or the purpose is empty.
 */
export function createSecretBox(secretKey: string, purpose: string): SecretBox {
  // Prefixed so an encryption key never equals a signing key derived for the same purpose.
  const key = deriveKey(secretKey, `secret-box/${purpose}`)
  return {
    seal(plaintext) {
      if (typeof plaintext !== 'string') throw new AppError('internal', 'Only strings can be sealed')
      const iv = randomBytes(ivBytes)
      const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: tagBytes })
      cipher.setAAD(aad)
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
      const tag = cipher.getAuthTag()
      return [version, iv.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.')
    },
    open(sealed) {
      const parts = parseSealed(sealed)
      if (!parts) throw unreadable()
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, parts.iv, { authTagLength: tagBytes })
        decipher.setAAD(aad)
        decipher.setAuthTag(parts.tag)
        return Buffer.concat([decipher.update(parts.ciphertext), decipher.final()]).toString('utf8')
      } catch {
        throw unreadable()
      }
    },
  }
}

// The value itself is never echoed: it may be a secret sealed under another key.
function unreadable(): AppError {
  return new AppError('internal', 'A stored secret could not be decrypted (damaged, or sealed under another key)')
}

function parseSealed(sealed: unknown): { iv: Buffer; tag: Buffer; ciphertext: Buffer } | null {
  if (typeof sealed !== 'string') return null
  const [v, iv, tag, ciphertext, ...rest] = sealed.split('.')
  if (v !== version || rest.length > 0 || iv === undefined || tag === undefined || ciphertext === undefined) return null
  const [ivBuf, tagBuf, ctBuf] = [iv, tag, ciphertext].map(decodeCanonical)
  if (!ivBuf || !tagBuf || !ctBuf || ivBuf.length !== ivBytes || tagBuf.length !== tagBytes) return null
  return { iv: ivBuf, tag: tagBuf, ciphertext: ctBuf }
}

// Only the one canonical spelling is accepted, so every changed character is a changed byte.
function decodeCanonical(part: string): Buffer | null {
  if (!base64url.test(part)) return null
  const buf = Buffer.from(part, 'base64url')
  return buf.toString('base64url') === part ? buf : null
}
