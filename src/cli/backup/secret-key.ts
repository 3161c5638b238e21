import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** The instance's key as the server finds it: SECRET_KEY when set, else DATA_DIR/secret.key (null when neither). */
export function findSecretKey(
  dataDir: string,
  envKey: string | undefined,
): { source: 'environment' | 'file'; key: string } | null {
  const fromEnv = envKey?.trim()
  if (fromEnv) return { source: 'environment', key: fromEnv }
  try {
    return { source: 'file', key: readFileSync(join(dataDir, 'secret.key'), 'utf8').trim() }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
}

/**
 * A check value of a key: an HMAC of a fixed text under it. A restore compares it with the key it is given,
 * so a wrong SECRET_KEY is refused before anything is written; the value does not reveal the key.
 */
export function secretKeyCheck(key: string): string {
  return createHmac('sha256', key).update('plinth backup: secret key check').digest('hex').slice(0, 32)
}
