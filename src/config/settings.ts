/**
 * Every setting Plinth reads, with its default and what it does; config.ts reads them from the environment
 * (and is the only reader of `process.env`). docs/configuration.md mirrors this table; a test checks that
 * the two agree.
 */
export const settings = {
  HOST: { default: '127.0.0.1', doc: 'Interface to listen on.' },
  PORT: { default: '8090', doc: 'Port to listen on (0 picks a free port).' },
  DATA_DIR: { default: './data', doc: 'Where SQLite databases, local files and the generated secret key live.' },
  PUBLIC_URL: {
    default: 'http://HOST:PORT',
    doc: 'Public address that presigned, reset and sign-in links point at; set it behind a proxy or with PORT=0.',
  },
  DATABASE_URL: {
    default: '',
    doc: 'postgres://… switches every database to PostgreSQL (system tables and one schema per project).',
  },
  REDIS_URL: {
    default: '',
    doc: 'redis://… shares caches, rate limits, realtime fan-out and job queues between instances.',
  },
  REDIS_PREFIX: {
    default: 'plinth:',
    doc: 'Prefix of every Redis key and channel, so several deployments can share one Redis.',
  },
  S3_ENDPOINT: {
    default: '',
    doc: 'S3-compatible endpoint URL; with the other S3_* settings moves file storage off the local disk.',
  },
  S3_BUCKET: { default: '', doc: 'Bucket for files (required with S3_ENDPOINT).' },
  S3_ACCESS_KEY_ID: { default: '', doc: 'Access key id (required with S3_ENDPOINT).' },
  S3_SECRET_ACCESS_KEY: { default: '', doc: 'Secret access key (required with S3_ENDPOINT). Never logged.' },
  S3_REGION: { default: 'auto', doc: 'Region sent to the S3 endpoint.' },
  S3_PUBLIC_ENDPOINT: {
    default: '',
    doc: 'The S3 endpoint as clients reach it, when it differs from S3_ENDPOINT (a container name inside a compose network): presigned upload and download URLs are signed for it.',
  },
  SECRET_KEY: {
    default: '',
    doc: '32+ bytes; signs URLs and encrypts stored secrets. Generated into DATA_DIR/secret.key (mode 0600) when unset in embedded mode; required with DATABASE_URL.',
  },
  CORS_ORIGINS: {
    default: '',
    doc: 'Comma-separated origins allowed to call the API from a browser, or `*`. Empty: no cross-origin access.',
  },
  ADMIN_UI: {
    default: 'true',
    doc: 'Serve the admin UI at /_/ (and redirect / there). false: the API only.',
  },
  TRUST_PROXY: {
    default: 'false',
    doc: 'When true, the client IP is taken from X-Forwarded-For (set it only behind a proxy you control).',
  },
  MAX_BODY_BYTES: {
    default: '10485760',
    doc: 'Largest request body accepted (bytes); larger bodies get 413 payload_too_large.',
  },
  SHUTDOWN_TIMEOUT_MS: {
    default: '10000',
    doc: 'How long SIGTERM/SIGINT waits for in-flight requests before closing connections.',
  },
  RUN_LEASE_SECONDS: {
    default: '120',
    doc: 'How long an instance may go silent before another takes over its flow runs (docs/automation-runs.md); renewed every quarter of it, at most every 10 s.',
  },
  LOG_LEVEL: { default: 'info', doc: 'fatal, error, warn, info, debug, trace or silent.' },
  METRICS_TOKEN: {
    default: '',
    doc: 'Bearer token (16+ characters) that GET /metrics (Prometheus, docs/running.md#metrics) requires; unset, /metrics is off (404). Never logged.',
  },
  SMTP_URL: { default: '', doc: 'smtp://user:pass@host:port: email channel `email_binding`.' },
  EMAIL_FROM: { default: 'Plinth <no-reply@localhost>', doc: 'Sender address for mail Plinth sends.' },
  EMAIL_API_URL: {
    default: '',
    doc: 'JSON POST mail provider: email channel `rest_api` (with EMAIL_API_KEY), used when SMTP_URL is unset.',
  },
  EMAIL_API_KEY: { default: '', doc: 'Bearer key for EMAIL_API_URL. Never logged.' },
  EMAIL_RECEIPT_SECRET: {
    default: '',
    doc: 'Shared secret (16+ characters) delivery receipts to POST /api/v1/email/receipts are signed with; unset, receipts are refused and sent stays sent. Never logged.',
  },
  CF_ACCOUNT_ID: { default: '', doc: 'Cloudflare account for the Workers AI provider.' },
  CF_API_TOKEN: { default: '', doc: 'Cloudflare API token for Workers AI. Never logged.' },
  CF_AI_BASE_URL: {
    default: 'https://api.cloudflare.com/client/v4',
    doc: 'Base of the Workers AI REST API (an AI Gateway, tests); reached even on a private address (operator-trusted, docs/ai.md).',
  },
  OPENAI_BASE_URL: {
    default: '',
    doc: 'Any OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp, OpenAI): AI provider `openai`. Reached even on a private address (operator-trusted, docs/ai.md). Defaults to https://api.openai.com/v1 when only OPENAI_API_KEY is set.',
  },
  OPENAI_API_KEY: { default: '', doc: 'Bearer key for OPENAI_BASE_URL (local servers often need none). Never logged.' },
  OPENAI_MODEL: { default: 'gpt-4o-mini', doc: 'Text model of the `openai` provider when a step names none.' },
  OPENAI_IMAGE_MODEL: { default: 'dall-e-3', doc: 'Image model of the `openai` provider when ai_image names none.' },
  ALLOW_PRIVATE_NETWORK: {
    default: 'false',
    doc: 'When true, storage connections, database bindings (whoever registers them) and flows may reach loopback, private and link-local addresses.',
  },
  SESSION_TTL_SECONDS: { default: '604800', doc: 'Lifetime of a session token (7 days).' },
  PASSWORD_HASH_ITERATIONS: {
    default: '600000',
    doc: 'PBKDF2-SHA256 iterations for new password hashes (OWASP level). Stored hashes with fewer are upgraded at the next sign-in.',
  },
  AUTH_RATE_LIMIT: {
    default: '5',
    doc: 'Attempts per minute per client IP shared by sign-up, sign-in and is-username-available (and, separately, by reset and magic-link requests).',
  },
  GITHUB_CLIENT_ID: {
    default: '',
    doc: 'GitHub OAuth app client id; with GITHUB_CLIENT_SECRET enables GitHub sign-in.',
  },
  GITHUB_CLIENT_SECRET: { default: '', doc: 'GitHub OAuth app client secret. Never logged.' },
  GITHUB_AUTH_URL: {
    default: 'https://github.com',
    doc: "Base of GitHub's OAuth endpoints (/login/oauth/authorize, /login/oauth/access_token); GitHub Enterprise or tests.",
  },
  GITHUB_API_URL: {
    default: 'https://api.github.com',
    doc: 'Base of the GitHub API used to read the signed-in profile.',
  },
  GOOGLE_CLIENT_ID: { default: '', doc: 'Google OAuth client id; with GOOGLE_CLIENT_SECRET enables Google sign-in.' },
  GOOGLE_CLIENT_SECRET: { default: '', doc: 'Google OAuth client secret. Never logged.' },
  GOOGLE_AUTH_URL: {
    default: 'https://accounts.google.com/o/oauth2/v2/auth',
    doc: 'Google authorization endpoint (tests point it elsewhere).',
  },
  GOOGLE_TOKEN_URL: { default: 'https://oauth2.googleapis.com/token', doc: 'Google token endpoint.' },
  GOOGLE_USERINFO_URL: {
    default: 'https://openidconnect.googleapis.com/v1/userinfo',
    doc: 'Google OpenID Connect userinfo endpoint.',
  },
} as const

export type SettingName = keyof typeof settings
