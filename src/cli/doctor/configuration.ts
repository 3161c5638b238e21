import { existsSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { ConfigError, loadConfig, settings, type Config } from '../../config.js'
import { startupWarnings } from '../../startup-warnings.js'
import { fail, ok, warn, type CheckResult } from './check.js'

/**
 * Loads the configuration as `plinth serve` would, without its side effect: with no SECRET_KEY the server
 * creates DATA_DIR/secret.key, which a check must not do, so a stand-in key is given for the parse and the
 * real key is checked on its own (`checkSecretKey`).
 */
export function checkConfiguration(env: Record<string, string | undefined>): {
  result: CheckResult
  config: Config | null
} {
  const ownKey = env.SECRET_KEY?.trim()
  // With DATABASE_URL an unset SECRET_KEY is an error the parse must report, so no stand-in then.
  const standIn = !ownKey && !env.DATABASE_URL?.trim() ? { SECRET_KEY: 'doctor-stand-in-key-'.padEnd(40, 'x') } : {}
  try {
    const config = loadConfig({ ...env, ...standIn })
    const notes = startupWarnings(config)
    if (notes.length > 0) return { result: warn('config', notes.join(' ')), config }
    return { result: ok('config', 'every setting is valid'), config }
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    const lines = err.message.replace(/^Invalid configuration:\n\s*/, '').split(/\n\s*/)
    return {
      result: fail('config', `${lines.join('; ')}. Fix these settings (docs/configuration.md lists each one)`),
      config: null,
    }
  }
}

/** The secret key: SECRET_KEY, or DATA_DIR/secret.key (made at first start; missing beside data, it is lost). */
export function checkSecretKey(env: Record<string, string | undefined>): CheckResult {
  const ownKey = env.SECRET_KEY?.trim()
  if (ownKey) return ok('secret key', `SECRET_KEY is set (${Buffer.byteLength(ownKey)} bytes)`)
  const dataDir = resolve(env.DATA_DIR?.trim() || settings.DATA_DIR.default)
  const file = join(dataDir, 'secret.key')
  if (!existsSync(file)) {
    if (existsSync(join(dataDir, 'system.db'))) {
      return fail(
        'secret key',
        `${file} is missing but DATA_DIR holds data: a new key would leave stored secrets unreadable and signed links invalid. Restore the file from a backup`,
      )
    }
    return ok('secret key', `${file} does not exist yet; the server generates it at first start`)
  }
  let bytes: number
  try {
    bytes = Buffer.byteLength(readFileSync(file, 'utf8').trim())
  } catch {
    return fail('secret key', `${file} cannot be read by this user: fix its owner (the server's user) and mode 0600`)
  }
  if (bytes < 32) return fail('secret key', `${file} holds ${bytes} bytes, fewer than 32: restore the right file`)
  if ((statSync(file).mode & 0o077) !== 0) {
    return warn(
      'secret key',
      `${file} is readable by other users; the server sets mode 0600 at start (chmod 600 it now)`,
    )
  }
  return ok('secret key', `${file} (${bytes} bytes, mode 0600)`)
}
