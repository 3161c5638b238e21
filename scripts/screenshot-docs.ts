// Renders GET /api/docs in headless Chromium with the network closed and saves a screenshot.
// Usage: npx tsx scripts/screenshot-docs.ts [out.png]   (needs Debian's chromium at /usr/bin/chromium)
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { createApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { listen } from '../src/http/server.js'

const out = process.argv[2] ?? 'docs-screenshot.png'
const app = await createApp(loadConfig({ DATA_DIR: mkdtempSync(join(tmpdir(), 'plinth-shot-')), LOG_LEVEL: 'warn' }))
const server = await listen(app.fetch, { host: '127.0.0.1', port: 0, log: app.log })
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
})
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } })
  const external: string[] = []
  // Any request leaving this server fails the run: the page must render offline.
  await page.route('**/*', (route) => {
    const url = route.request().url()
    if (url.startsWith(server.url)) return route.continue()
    external.push(url)
    return route.abort()
  })
  await page.goto(`${server.url}/api/docs`)
  await page.waitForSelector('.opblock-summary', { timeout: 15_000 })
  const operations = await page.locator('.opblock-summary').count()
  await page.screenshot({ path: out, fullPage: false })
  console.log(
    `${out}: ${operations} operations rendered; external requests: ${external.length ? external.join(', ') : 'none'}`,
  )
  if (external.length > 0) process.exitCode = 1
} finally {
  await browser.close()
  await server.stop(1000)
  await app.close()
}
