import { CodeChallengeMethod, generateCodeVerifier, OAuth2Client } from 'arctic'
import { randomToken, safeEqual, sha256Hex } from '../../lib/crypto/index.js'
import { AppError, isAppError } from '../../lib/errors.js'
import type { UserRow } from '../users/index.js'
import type { AuthContext, OAuthProvider, RequestContext } from './context.js'
import { trustedUrl, withFragment } from './trusted-urls.js'

export const socialProviders = ['github', 'google'] as const
export type SocialProvider = (typeof socialProviders)[number]

const stateTtlSeconds = 600
const scopes: Record<SocialProvider, string[]> = {
  github: ['read:user', 'user:email'],
  google: ['openid', 'email', 'profile'],
}

interface Profile {
  id: string
  email: string
  name: string
}

/**
 * Social sign-in (GitHub, Google): authorization code flow with state and PKCE (S256). The state is a
 * one-time token holding the code verifier and the (trusted) callback URL; the session token reaches the
 * callback URL in its fragment. An account is linked by provider id, else by a verified email, else created
 * under the sign-up rules.
 */
export function createSocial(auth: AuthContext) {
  const { deps } = auth

  function provider(name: string): OAuthProvider {
    const config = (socialProviders as readonly string[]).includes(name) ? deps.oauth[name as SocialProvider] : null
    if (!config) throw new AppError('invalid_request', `Sign-in with "${name.slice(0, 30)}" is not configured`)
    return config
  }

  function client(name: string, config: OAuthProvider): OAuth2Client {
    return new OAuth2Client(config.clientId, config.clientSecret, `${deps.publicUrl}/api/auth/callback/${name}`)
  }

  async function fetchJson(url: string, accessToken: string): Promise<unknown> {
    const res = await fetch(url, {
      headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json', 'User-Agent': 'Plinth' },
      signal: AbortSignal.timeout(10_000),
    })
    if (!res.ok)
      throw new AppError('service_unavailable', 'The sign-in provider refused the profile request', {
        status: res.status,
      })
    return res.json()
  }

  async function profileOf(name: SocialProvider, config: OAuthProvider, accessToken: string): Promise<Profile> {
    if (name === 'github') {
      const user = (await fetchJson(`${config.profileUrl}/user`, accessToken)) as {
        id?: number | string
        login?: string
        name?: string | null
      }
      const emails = (await fetchJson(`${config.profileUrl}/user/emails`, accessToken)) as {
        email: string
        primary: boolean
        verified: boolean
      }[]
      const primary = Array.isArray(emails) ? emails.find((e) => e.primary && e.verified) : undefined
      if (user.id === undefined || !primary)
        throw new AppError('invalid_request', 'The GitHub account has no verified primary email')
      return { id: String(user.id), email: primary.email, name: user.name ?? user.login ?? '' }
    }
    const info = (await fetchJson(config.profileUrl, accessToken)) as {
      sub?: string
      email?: string
      email_verified?: boolean
      name?: string
    }
    if (!info.sub || !info.email || info.email_verified !== true)
      throw new AppError('invalid_request', 'The Google account has no verified email')
    return { id: info.sub, email: info.email, name: info.name ?? '' }
  }

  async function accountFor(name: SocialProvider, profile: Profile): Promise<UserRow> {
    const linked = await deps.store.oauthAccount(name, profile.id)
    if (linked) {
      const user = await deps.users.findRow(linked.user_id)
      if (user) return user
    }
    const byEmail = await deps.users.findRowsByEmail(profile.email)
    if (byEmail.length > 1) throw new AppError('conflict', 'Several accounts use this email; sign in with a username')
    let user =
      byEmail[0] ??
      (await deps.users.createFromProvider(
        deps.defaultProjectId,
        { email: profile.email, name: profile.name },
        await auth.signUpOpen(),
      ))
    if (!user.email_trusted) {
      // The provider proves the address; whoever registered it here did not. A password or second factor
      // they set could be an attacker's, waiting for the real owner to arrive: discard them.
      await deps.users.discardUnprovenCredentials(user.id)
      user = (await deps.users.findRow(user.id)) ?? user
    }
    await deps.store.linkOAuthAccount({
      provider: name,
      provider_user_id: profile.id,
      user_id: user.id,
      created_at: deps.clock.seconds(),
    })
    return user
  }

  return {
    /**
     * The provider's authorization URL to redirect the browser to, and a nonce for a cookie that binds the
     * attempt to this browser (see `callback`). Throws invalid_request.
     */
    async start(name: string, callbackURL: string): Promise<{ url: string; browserNonce: string; ttlSeconds: number }> {
      const config = provider(name)
      const callback = trustedUrl(callbackURL, deps.publicUrl, deps.trustedOrigins)
      const verifier = generateCodeVerifier()
      const browserNonce = randomToken(32)
      const { token: state } = await auth.issueToken('oauth_state', null, stateTtlSeconds, {
        provider: name,
        verifier,
        callback,
        browser: sha256Hex(browserNonce),
      })
      const url = client(name, config).createAuthorizationURLWithPKCE(
        config.authorizeUrl,
        state,
        CodeChallengeMethod.S256,
        verifier,
        scopes[name as SocialProvider],
      )
      return { url: url.toString(), browserNonce, ttlSeconds: stateTtlSeconds }
    },

    /**
     * Completes the flow and returns where to send the browser: the callback URL with `#token=…`, or with
     * `#error=<code>` (and `#mfa_token=…` when the account's second factor is still due). Throws
     * invalid_request only when the state is unusable (there is nowhere trusted to redirect to).
     */
    async callback(
      name: string,
      query: { code?: string; state?: string; error?: string },
      browserNonce: string | null,
      ctx: RequestContext,
    ): Promise<string> {
      const config = provider(name)
      const invalid = () =>
        new AppError('invalid_request', 'This sign-in attempt is invalid or has expired; start again')
      // Only the browser that started the attempt may finish it: otherwise a stranger could send a victim
      // to a callback URL of the stranger's own attempt and sign the victim in as the stranger (login CSRF).
      const pending = query.state ? await auth.peekToken('oauth_state', query.state) : null
      if (!pending || pending.data.provider !== name) throw invalid()
      if (!browserNonce || !safeEqual(sha256Hex(browserNonce), String(pending.data.browser))) {
        throw new AppError('invalid_request', 'Finish signing in in the browser that started it')
      }
      const state = await auth.takeToken('oauth_state', query.state!)
      if (!state) throw invalid()
      const callback = String(state.data.callback)
      if (query.error || !query.code) return withFragment(callback, { error: 'access_denied' })
      try {
        const tokens = await client(name, config).validateAuthorizationCode(
          config.tokenUrl,
          query.code,
          String(state.data.verifier),
        )
        const profile = await profileOf(name as SocialProvider, config, tokens.accessToken())
        const user = await accountFor(name as SocialProvider, profile)
        if (user.banned) return withFragment(callback, { error: 'account_banned' })
        if (user.totp_enabled) {
          const { token } = await auth.issueToken('mfa_pending', user.id, 300, { method: name })
          return withFragment(callback, { error: 'mfa_required', mfa_token: token })
        }
        await deps.users.recordSignIn(user.id)
        const signedIn = await auth.issueSession(user, name, ctx)
        return withFragment(callback, { token: signedIn.token })
      } catch (err) {
        const code = isAppError(err) ? err.code : 'provider_error'
        if (!isAppError(err)) deps.log.warn({ err, provider: name }, 'social sign-in failed')
        return withFragment(callback, { error: code === 'internal' ? 'provider_error' : code })
      }
    },

    /**
     * Finishes a sign-in that stopped at mfa_required (social): the pending token and a TOTP code. Each
     * attempt counts against the sign-in rate limit (the pending token survives a wrong code, so without it
     * the six digits could be guessed within the token's five minutes). Throws rate_limited,
     * invalid_request, account_banned, unauthorized.
     */
    async completeSecondFactor(input: { mfaToken: string; code: string }, ctx: RequestContext) {
      await auth.limit('auth', ctx)
      const peek = await auth.peekToken('mfa_pending', input.mfaToken)
      const user = peek?.userId ? await deps.users.findRow(peek.userId) : null
      if (!user) throw new AppError('invalid_request', 'This sign-in attempt is invalid or has expired; start again')
      // Banned between the provider step and the code: no session (as for password and magic-link sign-in).
      if (user.banned) throw new AppError('account_banned', 'This account has been banned')
      await auth.checkSecondFactor(user, input.code)
      if (!(await auth.takeToken('mfa_pending', input.mfaToken)))
        throw new AppError('invalid_request', 'This sign-in attempt is invalid or has expired; start again')
      await deps.users.recordSignIn(user.id)
      return auth.issueSession(user, 'second_factor', ctx)
    },
  }
}

export type Social = ReturnType<typeof createSocial>
