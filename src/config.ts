import { randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { z } from 'zod'
import { isModelName } from './lib/ai/index.js'

/**
 * Every setting Plinth reads, in one place. `process.env` is read nowhere else.
 * docs/configuration.md mirrors this table; a test checks that the two agree.
 */
export const settings = {
  HOST: { default: '127.0.0.1', doc: 'Interface to listen on.' },
  PORT: { default: '8090', doc: 'Port to listen on (0 picks a free port).' },
  DATA_DIR: { default: './data', doc: 'Where SQLite databases, local files and the generated secret key live.' },
  PUBLIC_URL: { default: 'http://HOST:PORT', doc: 'Public address that presigned, reset and sign-in links point at; set it behind a proxy or with PORT=0.' },
  DATABASE_URL: { default: '', doc: 'postgres://… switches every database to PostgreSQL (system tables and one schema per project).' },
  REDIS_URL: { default: '', doc: 'redis://… shares caches, rate limits, realtime fan-out and job queues between instances.' },
  REDIS_PREFIX: { default: 'plinth:', doc: 'Prefix of every Redis key and channel, so several deployments can share one Redis.' },
  S3_ENDPOINT: { default: '', doc: 'S3-compatible endpoint URL; with the other S3_* settings moves file storage off the local disk.' },
  S3_BUCKET: { default: '', doc: 'Bucket for files (required with S3_ENDPOINT).' },
  S3_ACCESS_KEY_ID: { default: '', doc: 'Access key id (required with S3_ENDPOINT).' },
  S3_SECRET_ACCESS_KEY: { default: '', doc: 'Secret access key (required with S3_ENDPOINT). Never logged.' },
  S3_REGION: { default: 'auto', doc: 'Region sent to the S3 endpoint.' },
  SECRET_KEY: { default: '', doc: '32+ bytes; signs URLs and encrypts stored secrets. Generated into DATA_DIR/secret.key (mode 0600) when unset in embedded mode; required with DATABASE_URL.' },
  CORS_ORIGINS: { default: '', doc: 'Comma-separated origins allowed to call the API from a browser, or `*`. Empty: no cross-origin access.' },
  TRUST_PROXY: { default: 'false', doc: 'When true, the client IP is taken from X-Forwarded-For (set it only behind a proxy you control).' },
  MAX_BODY_BYTES: { default: '10485760', doc: 'Largest request body accepted (bytes); larger bodies get 413 payload_too_large.' },
  SHUTDOWN_TIMEOUT_MS: { default: '10000', doc: 'How long SIGTERM/SIGINT waits for in-flight requests before closing connections.' },
  LOG_LEVEL: { default: 'info', doc: 'fatal, error, warn, info, debug, trace or silent.' },
  SMTP_URL: { default: '', doc: 'smtp://user:pass@host:port: email channel `email_binding`.' },
  EMAIL_FROM: { default: 'Plinth <no-reply@localhost>', doc: 'Sender address for mail Plinth sends.' },
  EMAIL_API_URL: { default: '', doc: 'JSON POST mail provider: email channel `rest_api` (with EMAIL_API_KEY), used when SMTP_URL is unset.' },
  EMAIL_API_KEY: { default: '', doc: 'Bearer key for EMAIL_API_URL. Never logged.' },
  EMAIL_RECEIPT_SECRET: { default: '', doc: 'Shared secret (16+ characters) delivery receipts to POST /api/v1/email/receipts are signed with; unset, receipts are refused and sent stays sent. Never logged.' },
  CF_ACCOUNT_ID: { default: '', doc: 'Cloudflare account for the Workers AI provider.' },
  CF_API_TOKEN: { default: '', doc: 'Cloudflare API token for Workers AI. Never logged.' },
  CF_AI_BASE_URL: { default: 'https://api.cloudflare.com/client/v4', doc: 'Base of the Workers AI REST API (an AI Gateway, tests); reached even on a private address (operator-trusted, docs/ai.md).' },
  OPENAI_BASE_URL: { default: '', doc: 'Any OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp, OpenAI): AI provider `openai`. Reached even on a private address (operator-trusted, docs/ai.md). Defaults to https://api.openai.com/v1 when only OPENAI_API_KEY is set.' },
  OPENAI_API_KEY: { default: '', doc: 'Bearer key for OPENAI_BASE_URL (local servers often need none). Never logged.' },
  OPENAI_MODEL: { default: 'gpt-4o-mini', doc: 'Text model of the `openai` provider when a step names none.' },
  OPENAI_IMAGE_MODEL: { default: 'dall-e-3', doc: 'Image model of the `openai` provider when ai_image names none.' },
  ALLOW_PRIVATE_NETWORK: { default: 'false', doc: 'When true, storage connections, database bindings (whoever registers them) and flows may reach loopback, private and link-local addresses.' },
  SESSION_TTL_SECONDS: { default: '604800', doc: 'Lifetime of a session token (7 days).' },
  PASSWORD_HASH_ITERATIONS: { default: '600000', doc: 'PBKDF2-SHA256 iterations for new password hashes (OWASP level). Stored hashes with fewer are upgraded at the next sign-in.' },
  AUTH_RATE_LIMIT: { default: '5', doc: 'Attempts per minute per client IP shared by sign-up, sign-in and is-username-available (and, separately, by reset and magic-link requests).' },
  GITHUB_CLIENT_ID: { default: '', doc: 'GitHub OAuth app client id; with GITHUB_CLIENT_SECRET enables GitHub sign-in.' },
  GITHUB_CLIENT_SECRET: { default: '', doc: 'GitHub OAuth app client secret. Never logged.' },
  GITHUB_AUTH_URL: { default: 'https://github.com', doc: 'Base of GitHub\'s OAuth endpoints (/login/oauth/authorize, /login/oauth/access_token); GitHub Enterprise or tests.' },
  GITHUB_API_URL: { default: 'https://api.github.com', doc: 'Base of the GitHub API used to read the signed-in profile.' },
  GOOGLE_CLIENT_ID: { default: '', doc: 'Google OAuth client id; with GOOGLE_CLIENT_SECRET enables Google sign-in.' },
  GOOGLE_CLIENT_SECRET: { default: '', doc: 'Google OAuth client secret. Never logged.' },
  GOOGLE_AUTH_URL: { default: 'https://accounts.google.com/o/oauth2/v2/auth', doc: 'Google authorization endpoint (tests point it elsewhere).' },
  GOOGLE_TOKEN_URL: { default: 'https://oauth2.googleapis.com/token', doc: 'Google token endpoint.' },
  GOOGLE_USERINFO_URL: { default: 'https://openidconnect.googleapis.com/v1/userinfo', doc: 'Google OpenID Connect userinfo endpoint.' },
} as const

export type SettingName = keyof typeof settings

const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes')
const int = (min: number, max: number) =>
  z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(min).max(max))
const optionalUrl = (protocols: string[]) =>
  z.string().refine((v) => v === '' || isUrlWith(v, protocols), `must be a URL starting with ${protocols.join(' or ')}`)

function isUrlWith(value: string, protocols: string[]): boolean {
  try {
    return protocols.includes(new URL(value).protocol)
  } catch {
    return false
  }
}

const envSchema = z.object({
  HOST: z.string().min(1),
  PORT: int(0, 65535),
  DATA_DIR: z.string().min(1),
  PUBLIC_URL: optionalUrl(['http:', 'https:']),
  DATABASE_URL: optionalUrl(['postgres:', 'postgresql:']),
  REDIS_URL: optionalUrl(['redis:', 'rediss:']),
  REDIS_PREFIX: z.string().regex(/^[\w:.-]{1,64}$/, 'must be 1-64 letters, digits or _ : . -'),
  S3_ENDPOINT: optionalUrl(['http:', 'https:']),
  S3_BUCKET: z.string(),
  S3_ACCESS_KEY_ID: z.string(),
  S3_SECRET_ACCESS_KEY: z.string(),
  S3_REGION: z.string().min(1),
  SECRET_KEY: z.string().refine((v) => v === '' || Buffer.byteLength(v) >= 32, 'must be at least 32 bytes'),
  CORS_ORIGINS: z.string(),
  TRUST_PROXY: bool,
  MAX_BODY_BYTES: int(1024, 1024 ** 3),
  SHUTDOWN_TIMEOUT_MS: int(0, 600_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  SMTP_URL: optionalUrl(['smtp:', 'smtps:']),
  EMAIL_FROM: z.string().min(3),
  EMAIL_API_URL: optionalUrl(['http:', 'https:']),
  EMAIL_API_KEY: z.string(),
  EMAIL_RECEIPT_SECRET: z.string().refine((v) => v === '' || v.length >= 16, 'must be at least 16 characters'),
  CF_ACCOUNT_ID: z.string(),
  CF_API_TOKEN: z.string(),
  CF_AI_BASE_URL: optionalUrl(['http:', 'https:']),
  OPENAI_BASE_URL: optionalUrl(['http:', 'https:']),
  OPENAI_API_KEY: z.string(),
  OPENAI_MODEL: z.string().refine(isModelName, 'must be a model name (letters, digits, @ . _ : - and /)'),
  OPENAI_IMAGE_MODEL: z.string().refine(isModelName, 'must be a model name (letters, digits, @ . _ : - and /)'),
  ALLOW_PRIVATE_NETWORK: bool,
  SESSION_TTL_SECONDS: int(60, 366 * 24 * 3600),
  PASSWORD_HASH_ITERATIONS: int(1000, 10_000_000),
  AUTH_RATE_LIMIT: int(1, 1_000_000),
  GITHUB_CLIENT_ID: z.string(),
  GITHUB_CLIENT_SECRET: z.string(),
  GITHUB_AUTH_URL: optionalUrl(['http:', 'https:']),
  GITHUB_API_URL: optionalUrl(['http:', 'https:']),
  GOOGLE_CLIENT_ID: z.string(),
  GOOGLE_CLIENT_SECRET: z.string(),
  GOOGLE_AUTH_URL: optionalUrl(['http:', 'https:']),
  GOOGLE_TOKEN_URL: optionalUrl(['http:', 'https:']),
  GOOGLE_USERINFO_URL: optionalUrl(['http:', 'https:']),
})

export type EmailChannel = 'email_binding' | 'rest_api' | 'email_no_channel'

export interface Config {
  readonly version: string
  readonly host: string
  readonly port: number
  readonly dataDir: string
  readonly publicUrl: string
  readonly database: { readonly kind: 'sqlite' } | { readonly kind: 'postgres'; readonly url: string }
  readonly redisUrl: string | null
  readonly redisPrefix: string
  readonly storage:
    | { readonly kind: 'local' }
    | {
        readonly kind: 's3'
        readonly endpoint: string
        readonly bucket: string
        readonly accessKeyId: string
        readonly secretAccessKey: string
        readonly region: string
      }
  readonly secretKey: string
  readonly corsOrigins: readonly string[]
  readonly trustProxy: boolean
  readonly maxBodyBytes: number
  readonly shutdownTimeoutMs: number
  readonly logLevel: string
  readonly email: {
    readonly channel: EmailChannel
    readonly from: string
    readonly smtpUrl: string | null
    readonly apiUrl: string | null
    readonly apiKey: string | null
    /** The shared secret signed delivery receipts carry; null: receipts are refused. */
    readonly receiptSecret: string | null
  }
  /** The AI providers that are configured (docs/ai.md): Workers AI with an account and a token; an OpenAI-compatible endpoint with a base URL or a key. */
  readonly ai: {
    readonly cloudflare: { readonly accountId: string; readonly apiToken: string; readonly baseUrl: string } | null
    readonly openai: { readonly baseUrl: string; readonly apiKey: string | null; readonly textModel: string; readonly imageModel: string } | null
  }
  readonly allowPrivateNetwork: boolean
  readonly auth: {
    readonly sessionTtlSeconds: number
    readonly passwordIterations: number
    readonly rateLimitPerMinute: number
  }
  /** Social sign-in providers that have both a client id and a secret. */
  readonly oauth: {
    readonly github: OAuthProviderConfig | null
    readonly google: OAuthProviderConfig | null
  }
}

export interface OAuthProviderConfig {
  readonly clientId: string
  readonly clientSecret: string
  readonly authorizeUrl: string
  readonly tokenUrl: string
  /** Where the profile is read: GitHub's API base, or Google's userinfo endpoint. */
  readonly profileUrl: string
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** Parses the environment once into a frozen Config; throws ConfigError naming the bad setting. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, string> = {}
  for (const [name, setting] of Object.entries(settings)) raw[name] = env[name]?.trim() || setting.default
  if (raw.PUBLIC_URL === settings.PUBLIC_URL.default) raw.PUBLIC_URL = ''

  const parsed = envSchema.safeParse(raw)
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${String(i.path[0])}: ${i.message} (got ${describe(raw, i.path[0])})`)
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`)
  }
  const e = parsed.data

  const s3Names = ['S3_ENDPOINT', 'S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const
  const s3Set = s3Names.filter((n) => e[n] !== '')
  if (s3Set.length > 0 && s3Set.length < s3Names.length) {
    const missing = s3Names.filter((n) => e[n] === '')
    throw new ConfigError(`Invalid configuration:\n  ${missing.join(', ')}: required when ${s3Set.join(', ')} is set`)
  }
  if (e.EMAIL_API_URL !== '' && e.EMAIL_API_KEY === '') {
    throw new ConfigError('Invalid configuration:\n  EMAIL_API_KEY: required when EMAIL_API_URL is set')
  }
  for (const provider of ['GITHUB', 'GOOGLE'] as const) {
    const id = e[`${provider}_CLIENT_ID`]
    const secret = e[`${provider}_CLIENT_SECRET`]
    if ((id === '') !== (secret === '')) {
      const missing = id === '' ? `${provider}_CLIENT_ID` : `${provider}_CLIENT_SECRET`
      throw new ConfigError(`Invalid configuration:\n  ${missing}: required when the other ${provider}_CLIENT_* setting is set`)
    }
  }
  if ((e.CF_ACCOUNT_ID === '') !== (e.CF_API_TOKEN === '')) {
    const missing = e.CF_ACCOUNT_ID === '' ? 'CF_ACCOUNT_ID' : 'CF_API_TOKEN'
    throw new ConfigError(`Invalid configuration:\n  ${missing}: required when the other of CF_ACCOUNT_ID and CF_API_TOKEN is set`)
  }
  if (e.DATABASE_URL !== '' && e.SECRET_KEY === '') {
    throw new ConfigError(
      'Invalid configuration:\n  SECRET_KEY: required with DATABASE_URL (every instance must share it; 32+ bytes)',
    )
  }

  const dataDir = resolve(e.DATA_DIR)
  const secretKey = e.SECRET_KEY !== '' ? e.SECRET_KEY : readOrCreateSecretKey(dataDir)
  const displayHost = e.HOST === '0.0.0.0' || e.HOST === '::' ? 'localhost' : e.HOST
  const channel: EmailChannel = e.SMTP_URL !== '' ? 'email_binding' : e.EMAIL_API_URL !== '' ? 'rest_api' : 'email_no_channel'

  return deepFreeze<Config>({
    version: readVersion(),
    host: e.HOST,
    port: e.PORT,
    dataDir,
    publicUrl: (e.PUBLIC_URL || `http://${displayHost}:${e.PORT}`).replace(/\/+$/, ''),
    database: e.DATABASE_URL !== '' ? { kind: 'postgres', url: e.DATABASE_URL } : { kind: 'sqlite' },
    redisUrl: e.REDIS_URL || null,
    redisPrefix: e.REDIS_PREFIX,
    storage:
      s3Set.length > 0
        ? {
            kind: 's3',
            endpoint: e.S3_ENDPOINT,
            bucket: e.S3_BUCKET,
            accessKeyId: e.S3_ACCESS_KEY_ID,
            secretAccessKey: e.S3_SECRET_ACCESS_KEY,
            region: e.S3_REGION,
          }
        : { kind: 'local' },
    secretKey,
    corsOrigins: e.CORS_ORIGINS.split(',').map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean),
    trustProxy: e.TRUST_PROXY,
    maxBodyBytes: e.MAX_BODY_BYTES,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    logLevel: e.LOG_LEVEL,
    email: {
      channel,
      from: e.EMAIL_FROM,
      smtpUrl: e.SMTP_URL || null,
      apiUrl: e.EMAIL_API_URL || null,
      apiKey: e.EMAIL_API_KEY || null,
      receiptSecret: e.EMAIL_RECEIPT_SECRET || null,
    },
    ai: {
      cloudflare: e.CF_ACCOUNT_ID ? { accountId: e.CF_ACCOUNT_ID, apiToken: e.CF_API_TOKEN, baseUrl: trimSlash(e.CF_AI_BASE_URL) } : null,
      openai:
        e.OPENAI_BASE_URL || e.OPENAI_API_KEY
          ? { baseUrl: trimSlash(e.OPENAI_BASE_URL || 'https://api.openai.com/v1'), apiKey: e.OPENAI_API_KEY || null, textModel: e.OPENAI_MODEL, imageModel: e.OPENAI_IMAGE_MODEL }
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

// Secrets are never echoed back in an error message, only their length.
const secretSettings = new Set([
  'SECRET_KEY',
  'S3_SECRET_ACCESS_KEY',
  'EMAIL_API_KEY',
  'EMAIL_RECEIPT_SECRET',
  'CF_API_TOKEN',
  'OPENAI_API_KEY',
  'DATABASE_URL',
  'SMTP_URL',
  'REDIS_URL',
  'GITHUB_CLIENT_SECRET',
  'GOOGLE_CLIENT_SECRET',
])
function describe(raw: Record<string, string>, key: PropertyKey | undefined): string {
  const name = String(key)
  const value = raw[name] ?? ''
  return secretSettings.has(name) ? `${value.length} characters` : JSON.stringify(value)
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
