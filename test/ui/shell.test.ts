import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browserMissing, expectAccessible, launchBrowser, signInThroughUi, type Browser } from '../support/browser.js'
import { startServer, type TestServer } from '../support/harness.js'

// The admin UI's way in, in headless Chromium on a fresh server: the first-run form makes the owner, the
// session is a cookie the page cannot read, sign-out and sign-in again; each screen accessible (axe), no
// console error and no policy violation, light and dark, and at 320 px.

let server: TestServer
let browser: Browser
beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

const owner = { name: 'Olive Owner', email: 'owner@example.com', password: 'owner password' }

describe.skipIf(browserMissing)('admin UI: first run, sign-in, the shell', () => {
  it('a fresh instance offers the first-run form; it makes the owner and opens the shell', async () => {
    browser = await launchBrowser(server)
    const { page, problems } = await browser.open('/')
    await page.getByRole('heading', { name: 'Welcome to Plinth' }).waitFor()
    expect(page.url()).toBe(`${server.url}/_/`)
    await expectAccessible(page, 'first run')
    await page.getByLabel('Your name').fill(owner.name)
    await page.getByLabel('Email').fill(owner.email)
    await page.getByLabel('Password').fill(owner.password)
    await page.getByRole('button', { name: 'Create the owner' }).click()
    await page.getByRole('navigation', { name: 'Main' }).waitFor()
    await expect.poll(() => page.getByRole('link', { name: owner.name }).count()).toBe(1)
    await expectAccessible(page, 'shell')
    // The session is an HttpOnly cookie: script on the page cannot read it, only the CSRF token.
    const visible = (await page.evaluate('document.cookie')) as string
    expect(visible).toContain('plinth_csrf=')
    expect(visible).not.toContain('plinth_session')
    const cookies = await browser.context.cookies(server.url)
    const session = cookies.find((c) => c.name === 'plinth_session')!
    expect(session.httpOnly).toBe(true)
    expect(session.sameSite).toBe('Strict')
    // Nothing kept in storage the page's scripts could leak.
    expect(await page.evaluate('JSON.stringify(localStorage) + JSON.stringify(sessionStorage)')).toBe('{}{}')
    // The signed-out probe of the session is the one expected refusal.
    expect((await problems()).filter((p) => !p.includes('status of 401'))).toEqual([])
  })

  it('sign out, then sign in again with the form', async () => {
    const { page, problems } = await browser.open('/_/')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { name: 'Sign in to Plinth' }).waitFor()
    await expectAccessible(page, 'sign-in')
    await page.getByLabel(/^Email/).fill(owner.email)
    await page.getByLabel('Password').fill('wrong password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/\w/)
    await page.getByLabel('Password').fill(owner.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('navigation', { name: 'Main' }).waitFor()
    expect((await problems()).filter((p) => !p.includes('401'))).toEqual([])
  })

  it('dark scheme and a 320 px screen: still accessible, the sidebar behind a menu button', async () => {
    const { page } = await browser.open('/_/', { colorScheme: 'dark', width: 320 })
    await page.getByRole('button', { name: 'Menu' }).waitFor()
    expect(await page.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(false)
    await page.getByRole('button', { name: 'Menu' }).click()
    expect(await page.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(true)
    await expectAccessible(page, 'dark, 320 px')
    // Nothing wider than the screen.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(320)
  })

  it('an unknown path under /_/ shows a not-found page inside the shell', async () => {
    const { page } = await browser.open('/_/no/such/page')
    await page.getByRole('heading', { name: 'Not found' }).waitFor()
  })

  it('signing in through the helper works (what the other UI tests use)', async () => {
    const fresh = await launchBrowser(server)
    try {
      const { page } = await fresh.open('/_/')
      await signInThroughUi(page, owner.email, owner.password)
    } finally {
      await fresh.close()
    }
  })
})
