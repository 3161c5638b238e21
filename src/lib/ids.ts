import { randomUUID } from 'node:crypto'

/** A new identifier: a UUIDv4 without hyphens (32 lower-case hex characters). */
export function newId(): string {
  return randomUUID().replaceAll('-', '')
}

export const idPattern = /^[0-9a-f]{32}$/
