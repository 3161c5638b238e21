// Accounts: sign-up, sign-in (two-factor included), sign-out, the current user, TOTP, API keys.
import { MfaRequiredError } from './errors.js'
import type { components } from './generated/openapi.js'
import type { Transport } from './transport.js'

export type SignedIn = components['schemas']['SignedIn']
export type Session = components['schemas']['Session']
export type ApiKey = components['schemas']['ApiKey']
export type CreatedApiKey = components['schemas']['CreatedApiKey']

export type SignInCredentials = ({ email: string } | { username: string }) & {
  password: string
  /** The authenticator's 6-digit code, for an account with two-factor on. */
  code?: string
}

export interface SignInOptions {
  /**
   * Asked for the code when the server answers `mfa_required` (two-factor on, no code sent); the sign-in is
   * then sent again with it. Without it, such a sign-in throws MfaRequiredError.
   */
  totp?: () => string | Promise<string>
  signal?: AbortSignal
}

export interface Auth {
  /** Creates an account and signs it in (the install's first sign-up is the owner). */
  signUp(
    account: { email: string; password: string; name: string },
    options?: { signal?: AbortSignal },
  ): Promise<SignedIn>
  /** Signs in by email or username; the session token goes to the client's TokenStore. */
  signIn(credentials: SignInCredentials, options?: SignInOptions): Promise<SignedIn>
  /** Ends the session on the server and forgets the token (the token is forgotten even if the server call fails). */
  signOut(options?: { signal?: AbortSignal }): Promise<void>
  /** The signed-in user and session; UnauthorizedError without a valid credential. */
  session(options?: { signal?: AbortSignal }): Promise<Session>
  /** Whether a session token is held (it may have expired on the server). */
  readonly signedIn: boolean
  readonly totp: {
    /** Starts enrolment: the secret and the otpauth:// URI for an authenticator app. */
    enroll(): Promise<{ secret: string; uri: string }>
    /** Turns two-factor on with a code from the app. */
    confirm(code: string): Promise<void>
    /** Turns two-factor off with a current code. */
    disable(code: string): Promise<void>
  }
  readonly apiKeys: {
    /** Creates a key; `raw` (the sk- key itself) is answered only here. Expiry in Unix seconds. */
    create(key: {
      label: string
      capabilities: string[]
      expiresAt?: number | null
      service?: boolean
    }): Promise<CreatedApiKey>
    list(): Promise<ApiKey[]>
    /** Revokes a key; it stops working at once. */
    revoke(id: string): Promise<void>
  }
}

export function createAuth(transport: Transport): Auth {
  // A cookie session's token stays in the browser's cookie jar: nothing to keep here.
  const keep = (signedIn: SignedIn) => {
    if (!transport.cookieSession) transport.tokens.set({ token: signedIn.token })
    return signedIn
  }
  const signInOnce = (credentials: SignInCredentials, signal: AbortSignal | undefined) =>
    transport.request<SignedIn>(
      'POST',
      'email' in credentials ? '/api/auth/sign-in/email' : '/api/auth/sign-in/username',
      {
        body: credentials,
        signal,
      },
    )
  return {
    async signUp(account, options = {}) {
      return keep(
        await transport.request<SignedIn>('POST', '/api/auth/sign-up/email', {
          body: account,
          signal: options.signal,
        }),
      )
    },
    async signIn(credentials, options = {}) {
      try {
        return keep(await signInOnce(credentials, options.signal))
      } catch (err) {
        if (!(err instanceof MfaRequiredError) || !options.totp || credentials.code !== undefined) throw err
        return keep(await signInOnce({ ...credentials, code: await options.totp() }, options.signal))
      }
    },
    async signOut(options = {}) {
      try {
        if (transport.tokens.get() || transport.cookieSession)
          await transport.request('POST', '/api/auth/sign-out', { signal: options.signal })
      } finally {
        transport.tokens.set(undefined)
      }
    },
    session: (options = {}) => transport.request<Session>('GET', '/api/auth/get-session', { signal: options.signal }),
    get signedIn() {
      return transport.tokens.get() !== undefined
    },
    totp: {
      enroll: () => transport.request('POST', '/api/auth/totp/enroll'),
      async confirm(code) {
        await transport.request('POST', '/api/auth/totp/confirm', { body: { code } })
      },
      async disable(code) {
        await transport.request('POST', '/api/auth/totp/disable', { body: { code } })
      },
    },
    apiKeys: {
      create: ({ label, capabilities, expiresAt, service }) =>
        transport.request<CreatedApiKey>('POST', '/api/auth/api-keys', {
          body: { label, capabilities, expires_at: expiresAt, service },
        }),
      list: () => transport.request<ApiKey[]>('GET', '/api/auth/api-keys'),
      async revoke(id) {
        await transport.request('DELETE', `/api/auth/api-keys/${encodeURIComponent(id)}`)
      },
    },
  }
}
