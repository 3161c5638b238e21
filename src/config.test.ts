import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig, settings } from './config.js'

const tmp = () => mkdtempSync(join(tmpdir(), 'plinth-config-'))

describe('loadConfig', () => {
  it('applies every default and freezes the result', () => {
    const dir = tmp()
    const config = loadConfig({ DATA_DIR: dir })
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8090,
      dataDir: dir,
      publicUrl: 'http://127.0.0.1:8090',
      database: { kind: 'sqlite' },
      storage: { kind: 'local' },
      redisUrl: null,
      corsOrigins: [],
      trustProxy: false,
      maxBodyBytes: 10485760,
      shutdownTimeoutMs: 10000,
      runLeaseMs: 120_000,
      logLevel: 'info',
      email: { channel: 'email_no_channel', smtpUrl: null },
      allowPrivateNetwork: false,
    })
    expect(Object.isFrozen(config)).toBe(true)
    expect(Object.isFrozen(config.email)).toBe(true)
    expect(() => {
      ;(config as { port: number }).port = 1
    }).toThrow()
  })

  it('generates SECRET_KEY once into DATA_DIR with mode 0600 and reuses it', () => {
    const dir = tmp()
    const first = loadConfig({ DATA_DIR: dir }).secretKey
    const file = join(dir, 'secret.key')
    expect(Buffer.byteLength(first)).toBeGreaterThanOrEqual(32)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(loadConfig({ DATA_DIR: dir }).secretKey).toBe(first)
  })

  it('refuses a secret.key file that is too short', () => {
    const dir = tmp()
    writeFileSync(join(dir, 'secret.key'), 'short\n', { mode: 0o600 })
    expect(() => loadConfig({ DATA_DIR: dir })).toThrow(/SECRET_KEY/)
  })

  it('uses SECRET_KEY from the environment without writing a file', () => {
    const dir = tmp()
    const key = 'k'.repeat(40)
    expect(loadConfig({ DATA_DIR: dir, SECRET_KEY: key }).secretKey).toBe(key)
    expect(() => statSync(join(dir, 'secret.key'))).toThrow()
  })

  it.each([
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['SECRET_KEY', { SECRET_KEY: 'too-short' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://x' }],
    ['SECRET_KEY', { DATABASE_URL: 'postgres://u@h/db' }],
    ['REDIS_URL', { REDIS_URL: 'http://x' }],
    ['S3_BUCKET', { S3_ENDPOINT: 'http://s3.local', S3_ACCESS_KEY_ID: 'a', S3_SECRET_ACCESS_KEY: 'b' }],
    ['S3_ENDPOINT', { S3_PUBLIC_ENDPOINT: 'http://localhost:9000' }],
    ['S3_PUBLIC_ENDPOINT', { S3_PUBLIC_ENDPOINT: 'ftp://files' }],
    ['TRUST_PROXY', { TRUST_PROXY: 'maybe' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['MAX_BODY_BYTES', { MAX_BODY_BYTES: '-1' }],
    ['PUBLIC_URL', { PUBLIC_URL: 'not a url' }],
    ['SMTP_URL', { SMTP_URL: 'http://mail' }],
    ['EMAIL_API_KEY', { EMAIL_API_URL: 'https://mail.example/send' }],
  ])('a bad value stops start-up naming %s', (name, env) => {
    let error: unknown
    try {
      loadConfig({ DATA_DIR: tmp(), ...env })
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as Error).message).toContain(name)
  })

  it('never echoes a secret value in its error', () => {
    const secret = 'short-but-secret'
    expect(() => loadConfig({ DATA_DIR: tmp(), SECRET_KEY: secret })).toThrow(
      /SECRET_KEY: must be at least 32 bytes \(got 16 characters\)/,
    )
  })

  it('derives PostgreSQL, S3, email and CORS settings', () => {
    const config = loadConfig({
      DATA_DIR: tmp(),
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/plinth',
      SECRET_KEY: 's'.repeat(32),
      S3_ENDPOINT: 'http://127.0.0.1:4568',
      S3_BUCKET: 'files',
      S3_ACCESS_KEY_ID: 'id',
      S3_SECRET_ACCESS_KEY: 'secret',
      SMTP_URL: 'smtp://u:p@127.0.0.1:2525',
      EMAIL_API_URL: 'https://mail.example/send',
      EMAIL_API_KEY: 'key',
      CORS_ORIGINS: 'https://a.example/, https://b.example',
      PUBLIC_URL: 'https://api.example/',
      HOST: '0.0.0.0',
    })
    expect(config.database).toEqual({ kind: 'postgres', url: 'postgres://postgres@127.0.0.1:5432/plinth' })
    expect(config.storage).toMatchObject({ kind: 's3', bucket: 'files', region: 'auto' })
    expect(config.email.channel).toBe('email_binding') // SMTP wins over the REST provider
    expect(config.corsOrigins).toEqual(['https://a.example', 'https://b.example'])
    expect(config.publicUrl).toBe('https://api.example')
  })

  it('AI providers: Workers AI with an account and a token (both or neither); an OpenAI-compatible endpoint with a base URL, a key or both', () => {
    expect(loadConfig({ DATA_DIR: tmp() }).ai).toEqual({ cloudflare: null, openai: null })
    const cf = loadConfig({ DATA_DIR: tmp(), CF_ACCOUNT_ID: 'acc', CF_API_TOKEN: 'tok' }).ai
    expect(cf.cloudflare).toEqual({
      accountId: 'acc',
      apiToken: 'tok',
      baseUrl: 'https://api.cloudflare.com/client/v4',
    })
    expect(() => loadConfig({ DATA_DIR: tmp(), CF_ACCOUNT_ID: 'acc' })).toThrow(/CF_API_TOKEN: required/)
    expect(() => loadConfig({ DATA_DIR: tmp(), CF_API_TOKEN: 'tok' })).toThrow(/CF_ACCOUNT_ID: required/)
    expect(loadConfig({ DATA_DIR: tmp(), OPENAI_API_KEY: 'sk-1' }).ai.openai).toEqual({
      baseUrl: 'https://api.openai.com/v1',
      apiKey: 'sk-1',
      textModel: 'gpt-4o-mini',
      imageModel: 'dall-e-3',
    })
    expect(
      loadConfig({ DATA_DIR: tmp(), OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1/', OPENAI_MODEL: 'llama3.1:8b' }).ai
        .openai,
    ).toEqual({ baseUrl: 'http://127.0.0.1:11434/v1', apiKey: null, textModel: 'llama3.1:8b', imageModel: 'dall-e-3' })
    expect(() => loadConfig({ DATA_DIR: tmp(), OPENAI_BASE_URL: 'ftp://x' })).toThrow(/OPENAI_BASE_URL/)
    expect(() => loadConfig({ DATA_DIR: tmp(), OPENAI_MODEL: '../x' })).toThrow(/OPENAI_MODEL: must be a model name/)
  })

  it('picks the REST email channel when only EMAIL_API_URL is set', () => {
    const config = loadConfig({ DATA_DIR: tmp(), EMAIL_API_URL: 'https://mail.example/send', EMAIL_API_KEY: 'k' })
    expect(config.email.channel).toBe('rest_api')
  })
})

describe('docs/configuration.md', () => {
  it('lists every setting with its default', () => {
    const doc = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8')
    const rows = new Map(
      [...doc.matchAll(/^\| `([A-Z0-9_]+)` \| ([^|]*) \|/gm)].map((m) => [m[1]!, m[2]!.trim()] as const),
    )
    expect([...rows.keys()].sort()).toEqual(Object.keys(settings).sort())
    for (const [name, setting] of Object.entries(settings)) {
      const shown = setting.default === '' ? '(unset)' : `\`${setting.default}\``
      expect(rows.get(name), name).toBe(shown)
    }
  })
})
