// Screenshots of the admin UI's main screens for docs/admin-ui.md, from the real UI on a fresh server with
// seeded data (`npm run ui:screenshots`; needs Debian's chromium at /usr/bin/chromium). Writes
// docs/admin-ui/<screen>.png; any request leaving the server, console error or policy violation fails the run.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Page } from 'playwright-core'
import sharp from 'sharp'
import { createApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { listen } from '../src/http/server.js'

const outDir = fileURLToPath(new URL('../docs/admin-ui/', import.meta.url))
const dataDir = mkdtempSync(join(tmpdir(), 'plinth-ui-shots-'))
// A free port known before start, so presigned upload URLs (PUBLIC_URL) point at this server.
const port = await new Promise<number>((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address() as AddressInfo
    probe.close(() => resolve(port))
  })
})
const app = await createApp(
  loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    PASSWORD_HASH_ITERATIONS: '1000',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
  }),
)
const server = await listen(app.fetch, { host: '127.0.0.1', port, log: app.log })
const owner = { email: 'olive@example.com', password: 'correct horse battery', name: 'Olive Owner' }

async function call<T = any>(method: string, path: string, token: string | null, body?: unknown): Promise<T> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`)
  return (text ? JSON.parse(text) : undefined) as T
}

/** What a team has after its first hour: a collection with records, a role, a flow that ran, a file. */
async function seed(): Promise<{ flowId: string; roleId: string }> {
  const { token } = await call<{ token: string }>('POST', '/api/auth/sign-up/email', null, owner)
  await call('POST', '/api/v1/collections', token, {
    name: 'articles',
    fields: [
      { name: 'title', type: 'text', required: true },
      { name: 'status', type: 'enum', required: false, enumValues: ['draft', 'review', 'published'], indexed: true },
      { name: 'views', type: 'integer', required: false, indexed: true },
      { name: 'published_on', type: 'date', required: false },
      { name: 'featured', type: 'boolean', required: false },
    ],
  })
  const statuses = ['draft', 'review', 'published']
  const words = ['Quiet', 'Harbour', 'Ledger', 'Signal', 'Orchard', 'Copper', 'Meadow', 'Lantern', 'Atlas', 'Cinder']
  for (let i = 0; i < 60; i++) {
    await call('POST', '/api/v1/collections/articles/records', token, {
      title: `${words[i % 10]} ${words[(i * 7 + 3) % 10]!.toLowerCase()} notes ${i + 1}`,
      status: statuses[i % 3],
      views: (i * 137) % 5000,
      published_on: `2026-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 27) + 1).padStart(2, '0')}`,
      featured: i % 5 === 0,
    })
  }
  const role = await call<{ data: { id: string } }>('POST', '/api/v1/roles', token, {
    name: 'reader',
    description: 'Reads published articles',
  })
  await call('PUT', `/api/v1/roles/${role.data.id}/grants`, token, {
    grants: [{ resource: 'collections/articles', action: 'read', item_filter: { status: { _eq: 'published' } } }],
  })
  await call('POST', '/api/v1/users', token, {
    email: 'rita@example.com',
    password: 'rita reads articles',
    name: 'Rita Reader',
    role: 'reader',
  })
  const flow = await call<{ data: { id: string } }>('POST', '/api/v1/automate/flows', token, {
    name: 'Headline in capitals',
    triggerType: 'manual',
    triggerConfig: { input_fields: [{ name: 'title', label: 'Title', type: 'text', required: true }] },
    operations: [
      {
        key: 'shout',
        type: 'text_format',
        config: { template: '{{$trigger.body.input.title}}', operations: [{ type: 'uppercase' }] },
      },
    ],
  })
  await call('POST', `/api/v1/automate/flows/${flow.data.id}/publish`, token, {})
  await call('PATCH', `/api/v1/automate/flows/${flow.data.id}/status`, token, { status: 'active' })
  await call('POST', `/api/v1/automate/flows/${flow.data.id}/trigger`, token, { input: { title: 'Hello there' } })
  const png = await sharp({ create: { width: 640, height: 400, channels: 3, background: '#3a6ea5' } })
    .png()
    .toBuffer()
  const upload = await call<{ id: string; uploadUrl: string }>('POST', '/api/v1/files/upload-token', token, {
    filename: 'harbour.png',
    mime_type: 'image/png',
    size_bytes: png.length,
  })
  const put = await fetch(upload.uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/png' }, body: png })
  if (!put.ok) throw new Error(`upload answered ${put.status}`)
  await call('POST', `/api/v1/files/confirm-upload/${upload.id}`, token)
  return { flowId: flow.data.id, roleId: role.data.id }
}

async function shoot(page: Page, path: string, name: string, problems: string[]): Promise<void> {
  await page.goto(`${server.url}/_${path}`)
  await page.locator('#page-title').waitFor({ timeout: 15_000 })
  await page.waitForLoadState('networkidle')
  await page.screenshot({ path: join(outDir, `${name}.png`) })
  console.log(`docs/admin-ui/${name}.png  (${path})`)
  if (problems.length > 0) throw new Error(`${path}: ${problems.join('; ')}`)
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
})
try {
  const { flowId, roleId } = await seed()
  mkdirSync(outDir, { recursive: true })
  for (const scheme of ['light', 'dark'] as const) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: scheme })
    const page = await context.newPage()
    const problems: string[] = []
    await page.route('**/*', (route) =>
      route.request().url().startsWith(server.url) ? route.continue() : route.abort(),
    )
    page.on('pageerror', (e) => problems.push(e.message))
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().includes('status of 401')) problems.push(m.text())
    })
    await page.goto(`${server.url}/_/`)
    await page.getByLabel(/^Email/).fill(owner.email)
    await page.getByLabel('Password').fill(owner.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('navigation', { name: 'Main' }).waitFor()
    const screens: [string, string][] =
      scheme === 'light'
        ? [
            ['/', 'overview'],
            ['/collections', 'collections'],
            ['/collections/articles/schema', 'schema-editor'],
            ['/collections/articles', 'records'],
            ['/files', 'files'],
            ['/flows', 'flows'],
            [`/flows/${flowId}`, 'flow-editor'],
            [`/flows/${flowId}/runs`, 'flow-runs'],
            ['/users', 'users'],
            [`/roles/${roleId}`, 'role'],
            ['/keys', 'api-keys'],
            ['/audit', 'audit'],
          ]
        : [['/collections/articles', 'records-dark']]
    for (const [path, name] of screens) await shoot(page, path, name, problems)
    if (scheme === 'light') {
      await page.setViewportSize({ width: 375, height: 740 })
      await shoot(page, '/collections/articles', 'records-phone', problems)
    }
    await context.close()
  }
} finally {
  await browser.close()
  await server.stop(1000)
  await app.close()
  rmSync(dataDir, { recursive: true, force: true })
}
