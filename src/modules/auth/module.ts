import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import { createSecretBox } from '../../lib/crypto/index.js'
import type { Security } from '../../lib/http/index.js'
import type { AppModule } from '../../lib/module.js'
import type { Observers } from '../../lib/observers.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import type { ApiKeysService } from '../apikeys/index.js'
import type { ProjectsService } from '../projects/index.js'
import type { UserChange } from '../users/index.js'
import { createAuthenticate } from './authenticate.js'
import { createCookieSessions } from './cookie-session.js'
import { createAuthContext, type AuthDeps } from './context.js'
import { createRecovery } from './recovery.js'
import { recoveryRoutes } from './recovery-routes.js'
import { authRoutes } from './routes.js'
import { createAuthService } from './service.js'
import { createSessions } from './sessions.js'
import { createSocial } from './social.js'
import { createAuthStore } from './store.js'
import { createUserChanges } from './user-changes.js'

export interface AuthModuleDeps extends Omit<AuthDeps, 'store' | 'sessions' | 'totpBox'> {
  systemDb: Kysely<any>
  /** Tells this module about account changes (users.onChange); it registers what each change ends. */
  userChanges: Observers<[userId: string, change: UserChange]>
  apiKeys: ApiKeysService
  projects: ProjectsService
  pubsub: PubSub
  clock: Clock
  secretKey: string
  sessionTtlSeconds: number
  trustProxy: boolean
  /** Awaited after a session's database reads, before it is cached (tests race an invalidation there). */
  sessionLoadPace?: () => Promise<void>
}

/**
 * Sessions, sign-in, recovery, social sign-in and TOTP, and `security`: how every route resolves its
 * caller (session, `sk-` key, or anonymous) and checks the permission it declares.
 */
export async function createAuthModule(deps: AuthModuleDeps) {
  const {
    systemDb,
    userChanges,
    apiKeys,
    projects,
    pubsub,
    secretKey,
    sessionTtlSeconds,
    trustProxy,
    sessionLoadPace,
    ...context
  } = deps
  const { clock, log, access, users } = deps
  const store = createAuthStore(systemDb)
  const sessions = await createSessions({
    store,
    users,
    clock,
    pubsub,
    ttlSeconds: sessionTtlSeconds,
    loadPace: sessionLoadPace,
  })
  userChanges.add(createUserChanges({ store, sessions, apiKeys }))
  // Pages of PUBLIC_URL and TRUSTED_ORIGINS (never '*') may use a cookie session besides the request's own host.
  const cookies = createCookieSessions({
    secretKey,
    trustProxy,
    trustedOrigins: [new URL(deps.publicUrl).origin, ...deps.trustedOrigins.filter((o) => o !== '*')],
  })
  const security: Security = {
    authenticate: createAuthenticate({
      sessions,
      apiKeys,
      access,
      projects,
      defaultProjectId: deps.defaultProjectId,
      cookies,
    }),
    authorize: (principal, permission) => access.authorize(principal, permission),
  }
  const authContext = createAuthContext({ ...context, store, sessions, totpBox: createSecretBox(secretKey, 'totp') })
  const service = createAuthService(authContext)
  const recovery = createRecovery(authContext)
  const social = createSocial(authContext)
  const sweep = clock.every(10 * 60_000, () => store.deleteExpiredSessions(clock.seconds()), {
    onError: (err) => log.warn({ err }, 'expired session sweep failed'),
  })
  const trust = { trustProxy, publicUrl: deps.publicUrl, trustedOrigins: deps.trustedOrigins }
  return {
    service,
    recovery,
    sessions,
    security,
    routers: () => [
      authRoutes(service, security, { trustProxy, cookies, sessionTtlSeconds }),
      recoveryRoutes(recovery, social, security, trust, { cookies, sessionTtlSeconds }),
    ],
    async close() {
      await sweep.stop()
      await sessions.close()
    },
  } satisfies AppModule
}
