export type EmailChannel = 'email_binding' | 'rest_api' | 'email_no_channel'

/** The settings as the rest of Plinth reads them: checked, combined and frozen (built by config.ts's loadConfig). */
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
        /** Where clients reach the store (S3_PUBLIC_ENDPOINT); null: the endpoint itself. */
        readonly publicEndpoint: string | null
      }
  readonly secretKey: string
  readonly corsOrigins: readonly string[]
  readonly trustProxy: boolean
  readonly maxBodyBytes: number
  readonly shutdownTimeoutMs: number
  /** RUN_LEASE_SECONDS in ms: a flow run's lease, renewed by the instance running it. */
  readonly runLeaseMs: number
  readonly logLevel: string
  /** METRICS_TOKEN: the bearer token GET /metrics requires; null: /metrics is off. */
  readonly metricsToken: string | null
  /** ADMIN_UI: the admin UI at /_/. */
  readonly adminUi: boolean
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
    readonly openai: {
      readonly baseUrl: string
      readonly apiKey: string | null
      readonly textModel: string
      readonly imageModel: string
    } | null
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
