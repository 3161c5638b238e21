import { randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { ConfigError, parseSettings } from './config/schema.js'
import { settings } from './config/settings.js'
import type { Config, EmailChannel } from './config/types.js'

export { ConfigError } from './config/schema.js'
export { settings, type SettingName } from './config/settings.js'
export type { Config, EmailChannel, OAuthProviderConfig } from './config/types.js'

/**
 * Parses the environment once into a frozen Config; throws ConfigError naming the bad setting. The only
 * reader of `process.env`: the settings are listed in config/settings.ts and checked in config/schema.ts.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, string> = {}
  for (const [name, setting] of Object.entries(settings)) raw[name] = env[name]?.trim() || setting.default
  if (raw.PUBLIC_URL === settings.PUBLIC_URL.default) raw.PUBLIC_URL = ''
  const e = parseSettings(raw)

  const dataDir = resolve(e.DATA_DIR)
  const secretKey = e.SECRET_KEY !== '' ? e.SECRET_KEY : readOrCreateSecretKey(dataDir)
  const displayHost = e.HOST === '0.0.0.0' || e.HOST === '::' ? 'localhost' : e.HOST
  const channel: EmailChannel =
    e.SMTP_URL !== '' ? 'email_binding' : e.EMAIL_API_URL !== '' ? 'rest_api' : 'email_no_channel'

  return deepFreeze<Config>({
    version: readVersion(),
    host: e.HOST,
    port: e.PORT,
    dataDir,
    publicUrl: (e.PUBLIC_URL || `http://${displayHost}:${e.PORT}`).replace(/\/+$/, ''),
    database: e.DATABASE_URL !== '' ? { kind: 'postgres', url: e.DATABASE_URL } : { kind: 'sqlite' },
    redisUrl: e.REDIS_URL || null,
    redisPrefix: e.REDIS_PREFIX,
    // parseSettings accepts all four of S3_ENDPOINT, S3_BUCKET and the keys, or none.
    storage:
      e.S3_ENDPOINT !== ''
        ? {
            kind: 's3',
            endpoint: e.S3_ENDPOINT,
            bucket: e.S3_BUCKET,
            accessKeyId: e.S3_ACCESS_KEY_ID,
            secretAccessKey: e.S3_SECRET_ACCESS_KEY,
            region: e.S3_REGION,
            publicEndpoint: e.S3_PUBLIC_ENDPOINT || null,
          }
        : { kind: 'local' },
    secretKey,
    corsOrigins: e.CORS_ORIGINS.split(',')
      .map((o) => o.trim().replace(/\/+$/, ''))
      .filter(Boolean),
    trustProxy: e.TRUST_PROXY,
    maxBodyBytes: e.MAX_BODY_BYTES,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    runLeaseMs: e.RUN_LEASE_SECONDS * 1000,
    logLevel: e.LOG_LEVEL,
    metricsToken: e.METRICS_TOKEN || null,
    adminUi: e.ADMIN_UI,
    email: {
      channel,
      from: e.EMAIL_FROM,
      smtpUrl: e.SMTP_URL || null,
      apiUrl: e.EMAIL_API_URL || null,
      apiKey: e.EMAIL_API_KEY || null,
      receiptSecret: e.EMAIL_RECEIPT_SECRET || null,
    },
    ai: {
      cloudflare: e.CF_ACCOUNT_ID
        ? { accountId: e.CF_ACCOUNT_ID, apiToken: e.CF_API_TOKEN, baseUrl: trimSlash(e.CF_AI_BASE_URL) }
        : null,
      openai:
        e.OPENAI_BASE_URL || e.OPENAI_API_KEY
          ? {
              baseUrl: trimSlash(e.OPENAI_BASE_URL || 'https://api.openai.com/v1'),
              apiKey: e.OPENAI_API_KEY || null,
              textModel: e.OPENAI_MODEL,
              imageModel: e.OPENAI_IMAGE_MODEL,
            }
          : null,
    },
    allowPrivateNetwork: e.ALLOW_PRIVATE_NETWORK,
    auth: {
      sessionTtlSeconds: e.SESSION_TTL_SECONDS,
      passwordIterations: e.PASSWORD_HASH_ITERATIONS,
      rateLimitPerMinute: e.AUTH_RATE_LIMIT,
    },
    oauth: {
      github: e.GITHUB_CLIENT_ID
        ? {
            clientId: e.GITHUB_CLIENT_ID,
            clientSecret: e.GITHUB_CLIENT_SECRET,
            authorizeUrl: `${trimSlash(e.GITHUB_AUTH_URL)}/login/oauth/authorize`,
            tokenUrl: `${trimSlash(e.GITHUB_AUTH_URL)}/login/oauth/access_token`,
            profileUrl: trimSlash(e.GITHUB_API_URL),
          }
        : null,
      google: e.GOOGLE_CLIENT_ID
        ? {
            clientId: e.GOOGLE_CLIENT_ID,
            clientSecret: e.GOOGLE_CLIENT_SECRET,
            authorizeUrl: e.GOOGLE_AUTH_URL,
            tokenUrl: e.GOOGLE_TOKEN_URL,
            profileUrl: e.GOOGLE_USERINFO_URL,
          }
        : null,
    },
  })
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '')
}

function readOrCreateSecretKey(dataDir: string): string {
  const file = join(dataDir, 'secret.key')
  mkdirSync(dataDir, { recursive: true })
  try {
    const key = readFileSync(file, 'utf8').trim()
    if (Buffer.byteLength(key) < 32) throw new ConfigError(`SECRET_KEY: ${file} holds fewer than 32 bytes`)
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600)
    return key
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  const key = randomBytes(48).toString('base64url')
  // 'wx' fails if another process created the file first; then read theirs.
  try {
    writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' })
    return key
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim()
    throw err
  }
}

/** Plinth's version, from package.json (beside src/ in the sources and in the CLI's build). */
export function readVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
  return pkg.version
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}
