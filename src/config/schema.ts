import { z } from 'zod'
import { isModelName } from '../lib/ai/index.js'

/** A setting that is missing, malformed or contradicts another; main prints its message and exits. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

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

/** Each setting on its own, as a string from the environment (or its default) to its value. */
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
  S3_PUBLIC_ENDPOINT: optionalUrl(['http:', 'https:']),
  SECRET_KEY: z.string().refine((v) => v === '' || Buffer.byteLength(v) >= 32, 'must be at least 32 bytes'),
  CORS_ORIGINS: z.string(),
  ADMIN_UI: bool,
  TRUST_PROXY: bool,
  MAX_BODY_BYTES: int(1024, 1024 ** 3),
  SHUTDOWN_TIMEOUT_MS: int(0, 600_000),
  RUN_LEASE_SECONDS: int(5, 3600),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  METRICS_TOKEN: z
    .string()
    .refine((v) => v === '' || /^[\x21-\x7e]{16,}$/.test(v), 'must be at least 16 printable characters, no spaces'),
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

/** The settings, each checked and converted. */
export type ParsedSettings = z.infer<typeof envSchema>

/**
 * Checks every setting, then the ones that only make sense together (all of S3_*, an API key with its URL, an
 * OAuth client id with its secret, a shared SECRET_KEY with PostgreSQL); throws ConfigError naming each bad
 * setting, secrets by their length only.
 */
export function parseSettings(raw: Record<string, string>): ParsedSettings {
  const parsed = envSchema.safeParse(raw)
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (i) => `${String(i.path[0])}: ${i.message} (got ${describe(raw, i.path[0])})`,
    )
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`)
  }
  const e = parsed.data

  const s3Names = ['S3_ENDPOINT', 'S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const
  const s3Set = s3Names.filter((n) => e[n] !== '')
  if (s3Set.length > 0 && s3Set.length < s3Names.length) {
    const missing = s3Names.filter((n) => e[n] === '')
    throw new ConfigError(`Invalid configuration:\n  ${missing.join(', ')}: required when ${s3Set.join(', ')} is set`)
  }
  if (e.S3_PUBLIC_ENDPOINT !== '' && e.S3_ENDPOINT === '') {
    throw new ConfigError('Invalid configuration:\n  S3_ENDPOINT: required when S3_PUBLIC_ENDPOINT is set')
  }
  if (e.EMAIL_API_URL !== '' && e.EMAIL_API_KEY === '') {
    throw new ConfigError('Invalid configuration:\n  EMAIL_API_KEY: required when EMAIL_API_URL is set')
  }
  for (const provider of ['GITHUB', 'GOOGLE'] as const) {
    const id = e[`${provider}_CLIENT_ID`]
    const secret = e[`${provider}_CLIENT_SECRET`]
    if ((id === '') !== (secret === '')) {
      const missing = id === '' ? `${provider}_CLIENT_ID` : `${provider}_CLIENT_SECRET`
      throw new ConfigError(
        `Invalid configuration:\n  ${missing}: required when the other ${provider}_CLIENT_* setting is set`,
      )
    }
  }
  if ((e.CF_ACCOUNT_ID === '') !== (e.CF_API_TOKEN === '')) {
    const missing = e.CF_ACCOUNT_ID === '' ? 'CF_ACCOUNT_ID' : 'CF_API_TOKEN'
    throw new ConfigError(
      `Invalid configuration:\n  ${missing}: required when the other of CF_ACCOUNT_ID and CF_API_TOKEN is set`,
    )
  }
  if (e.DATABASE_URL !== '' && e.SECRET_KEY === '') {
    throw new ConfigError(
      'Invalid configuration:\n  SECRET_KEY: required with DATABASE_URL (every instance must share it; 32+ bytes)',
    )
  }

  return e
}

// Secrets are never echoed back in an error message, only their length.
const secretSettings = new Set([
  'SECRET_KEY',
  'S3_SECRET_ACCESS_KEY',
  'EMAIL_API_KEY',
  'EMAIL_RECEIPT_SECRET',
  'METRICS_TOKEN',
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
