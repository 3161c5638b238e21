import type { Logger } from '../../lib/log.js'
import type { AppModule } from '../../lib/module.js'
import { adminUiBundle } from './bundle.js'
import { adminUiContentSecurityPolicy, adminUiRoutes } from './routes.js'

export interface AdminUiDeps {
  /** ADMIN_UI: when false nothing is served (and `/` stays a 404). */
  enabled: boolean
  publicUrl: string
  /** Where presigned URLs point when object storage is elsewhere (S3_PUBLIC_ENDPOINT or S3_ENDPOINT). */
  storageOrigin: string | null
  log: Logger
}

/**
 * The admin UI (docs/admin-ui.md, decision 078): a Preact app in ui/, bundled at start when its sources
 * changed, served at /_/ by the same process. It calls the public API through @plinth/client with a
 * cookie session, like any other client; the server gives it nothing else.
 */
export function createAdminUiModule(deps: AdminUiDeps): AppModule {
  if (!deps.enabled) return {}
  // Started now so the first page load does not wait for it; a failure is logged and answered there.
  const bundle = adminUiBundle()
  bundle.catch((err: unknown) => deps.log.error({ err }, 'building the admin UI failed'))
  const origins = [new URL(deps.publicUrl).origin, ...(deps.storageOrigin ? [new URL(deps.storageOrigin).origin] : [])]
  return {
    routers: () => [adminUiRoutes(() => bundle, adminUiContentSecurityPolicy(origins))],
  }
}
