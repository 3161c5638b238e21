import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { expect } from 'vitest'
import type { TestServer } from './harness.js'

/**
 * Headless Chromium (Debian's, driven by playwright-core) for the admin UI's tests: a fresh profile, the
 * page's console errors, policy violations and uncaught errors collected, and an accessibility check with
 * axe-core. Chromium is required under CI=true; elsewhere a machine without it skips (`browserMissing`).
 */
export const executablePath = '/usr/bin/chromium'
export const browserMissing = !existsSync(executablePath) && process.env.CI !== 'true'
if (browserMissing)
  process.stderr.write(
    `\nSKIPPED: the admin UI's browser tests need ${executablePath} (Debian: apt-get install chromium); CI requires it.\n\n`,
  )

const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export interface Browser {
  readonly context: BrowserContext
  /** A new tab on `path` under the server (e.g. `/_/`), with its problems recorded. */
  open(path: string, options?: { colorScheme?: 'light' | 'dark'; width?: number }): Promise<UiPage>
  close(): Promise<void>
}

export interface UiPage {
  readonly page: Page
  /** Console errors, uncaught errors and Content-Security-Policy violations seen so far. */
  problems(): Promise<string[]>
}

/** Launches Chromium on a fresh profile for one server. */
export async function launchBrowser(server: TestServer): Promise<Browser> {
  if (!existsSync(executablePath))
    throw new Error(
      `${executablePath} is missing: the admin UI is tested in headless Chromium (apt-get install chromium)`,
    )
  const profile = mkdtempSync(join(tmpdir(), 'plinth-ui-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    args: chromiumArgs,
    headless: true,
    viewport: { width: 1280, height: 800 },
  })
  return {
    context,
    async open(path, options = {}) {
      const page = await context.newPage()
      // Below vitest's 30 s test timeout, so a step that never happens fails naming its locator instead of
      // the whole test timing out without saying where (CI once did, on a Save button left disabled).
      page.setDefaultTimeout(20_000)
      if (options.colorScheme) await page.emulateMedia({ colorScheme: options.colorScheme })
      if (options.width) await page.setViewportSize({ width: options.width, height: 800 })
      const seen: string[] = []
      page.on('console', (m) => {
        if (m.type() === 'error') seen.push(`console: ${m.text()}`)
      })
      page.on('pageerror', (e) => seen.push(`pageerror: ${e.message}`))
      await page.addInitScript(`
        window.__cspViolations = []
        document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI))
      `)
      await page.goto(`${server.url}${path}`)
      return {
        page,
        async problems() {
          const csp = (await page.evaluate('window.__cspViolations || []')) as string[]
          return [...seen, ...csp.map((v) => `csp: ${v}`)]
        },
      }
    },
    async close() {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

export interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: string[]
}

/**
 * Runs axe-core on the page as it is now and answers its serious and critical violations (WCAG 2.1 AA
 * rules and best practices). axe is injected through the DevTools protocol, outside the page's policy.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(axeSource)
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as {
    violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[]
  }
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }))
}

/** Asserts no serious or critical accessibility violation on the page, naming them when there are. */
export async function expectAccessible(page: Page, where: string): Promise<void> {
  const violations = await seriousViolations(page)
  expect(violations, `${where}: ${JSON.stringify(violations, null, 2)}`).toEqual([])
}

/** Signs in through the UI's own form (a cookie session) and waits for the shell. */
export async function signInThroughUi(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel(/^Email/).fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('navigation', { name: 'Main' }).waitFor()
}
