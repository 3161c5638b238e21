import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

// Swagger UI ships inside the npm package, so the reference renders with no network at all.
const assetDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))

const assetTypes = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'init.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
} as const

type AssetName = keyof typeof assetTypes
export const docsAssetNames = Object.keys(assetTypes) as [AssetName, ...AssetName[]]

// Tags start collapsed: with every one open the page is thousands of lines, and past about 130 operations
// Swagger UI 5.35 renders only the first open tag (measured here); collapsed, every tag is listed.
// A separate file, not an inline script, so the page's policy allows scripts from this origin only.
// Tokens entered under Authorize stay in the page's memory: persistAuthorization would keep them in
// localStorage, where any script on this origin, and anyone at the browser later, could read them.
const initScript = `window.ui = SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  persistAuthorization: false,
  displayOperationId: true,
  docExpansion: 'none',
});
`

const cache = new Map<AssetName, { body: Uint8Array<ArrayBuffer> | string; type: string }>()

/** One asset of the reference page, read from disk once. */
export function docsAsset(name: AssetName): { body: Uint8Array<ArrayBuffer> | string; type: string } {
  let asset = cache.get(name)
  if (!asset) {
    const body = name === 'init.js' ? initScript : new Uint8Array(readFileSync(join(assetDir, name)))
    asset = { body, type: assetTypes[name] }
    cache.set(name, asset)
  }
  return asset
}

/**
 * The policy the reference page works under: its scripts, styles and fonts from this origin only (no
 * inline script), images from here or `data:` (Swagger UI's icons), and requests ("Try it out") to this
 * origin or the public URL the document names as its server. Never framed.
 */
export function docsContentSecurityPolicy(publicUrl: string): string {
  const server = new URL(publicUrl).origin
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self' ${server}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ')
}

/** The reference page; its scripts are local (no CDN) and it loads the document from this server. */
export function docsPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Plinth API reference</title>
  <link rel="icon" type="image/png" href="/api/docs/assets/favicon-32x32.png">
  <link rel="stylesheet" href="/api/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/api/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/api/docs/assets/init.js"></script>
</body>
</html>
`
}
