import { OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { AppEnv } from '../../lib/http/index.js'
import type { AdminUiBundle, Asset } from './bundle.js'

/**
 * The admin UI's policy: its own scripts and styles only (no inline script, no eval), and connections to
 * this server and to where presigned uploads and downloads go (object storage, when it is elsewhere).
 */
export function adminUiContentSecurityPolicy(extraOrigins: readonly string[]): string {
  const others = [...new Set(extraOrigins)].join(' ')
  const plus = others ? ` ${others}` : ''
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: blob:${plus}`,
    `media-src 'self' blob:${plus}`,
    `connect-src 'self'${plus}`,
    "font-src 'self'",
    "manifest-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ')
}

/** The one page every UI path answers with; the UI routes on the client. */
function page(bundle: AdminUiBundle): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>Plinth</title>
<link rel="stylesheet" href="/_/assets/${bundle.style}">
<script type="module" src="/_/assets/${bundle.script}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The Plinth admin UI needs JavaScript.</noscript>
</body>
</html>
`
}

function encoded(c: Context<AppEnv>, asset: Asset): { body: Buffer; encoding: string | null } {
  const accepted = c.req.header('accept-encoding') ?? ''
  if (/\bbr\b/.test(accepted)) return { body: asset.brotli, encoding: 'br' }
  if (/\bgzip\b/.test(accepted)) return { body: asset.gzip, encoding: 'gzip' }
  return { body: asset.body, encoding: null }
}

/**
 * `/_/` and everything under it: the page (never cached: it names the current assets), the assets (cached
 * for a year: their names change with their content), and `/` redirecting to `/_/`.
 */
export function adminUiRoutes(bundle: () => Promise<AdminUiBundle>, policy: string): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>()
  router.get('/', (c) => c.redirect('/_/', 302))
  router.get('/_', (c) => c.redirect('/_/', 301))
  router.get('/_/assets/:name', async (c) => {
    const asset = (await bundle()).assets.get(c.req.param('name'))
    if (!asset) return c.json({ error: 'not_found', message: 'No such asset', details: {} }, 404)
    const { body, encoding } = encoded(c, asset)
    c.header('Content-Type', asset.type)
    c.header('Cache-Control', 'public, max-age=31536000, immutable')
    c.header('Vary', 'Accept-Encoding')
    if (encoding) c.header('Content-Encoding', encoding)
    return c.body(new Uint8Array(body), 200)
  })
  router.get('/_/*', async (c) => {
    const html = page(await bundle())
    c.header('Content-Security-Policy', policy)
    c.header('Cache-Control', 'no-cache')
    return c.html(html, 200)
  })
  return router
}
