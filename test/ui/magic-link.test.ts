import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browserMissing, launchBrowser, type Browser } from '../support/browser.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { startMailbox, type Mailbox } from '../support/mailbox.js'

// Magic-link sign-in through the admin UI with a real SMTP server: the sign-in screen asks for a link, the
// mailed link opens the UI with a session token in its address, and the UI trades it for a cookie session
// (POST /api/auth/renew-session, decision 078): the token that went through the address bar is dead at once.

let mailbox: Mailbox
let server: TestServer
let owner: Account
let browser: Browser
beforeAll(async () => {
  mailbox = await startMailbox()
  server = await startServer({ SMTP_URL: mailbox.url })
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await mailbox?.close()
})

describe.skipIf(browserMissing)('admin UI: magic link', () => {
  it('the mailed link signs in with a cookie session, and the token in the address stops working', async () => {
    browser = await launchBrowser(server)
    const { page, problems } = await browser.open('/_/')
    await page.getByLabel(/^Email/).fill(owner.email)
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click()
    await page.getByRole('status').filter({ hasText: 'sign-in link is on its way' }).waitFor()
    const mail = await mailbox.waitFor((m) => m.to.includes(owner.email))
    const link = /https?:\/\/\S+magic-link\/verify\S+/.exec(mail.text)![0]
    let location = ''
    page.on('response', (response) => {
      if (response.url().includes('/magic-link/verify')) location = response.headers().location ?? ''
    })
    await page.goto(link)
    await page.getByRole('navigation', { name: 'Main' }).waitFor()
    const fromAddress = new URLSearchParams(new URL(location).hash.slice(1)).get('token')!
    expect(fromAddress.length).toBeGreaterThan(20)
    expect((await server.request('GET', '/api/auth/get-session', { token: fromAddress })).status).toBe(401)
    // The address no longer holds the token; the page's session is the cookie.
    expect(new URL(page.url()).hash).toBe('')
    const cookies = await browser.context.cookies(server.url)
    expect(cookies.find((c) => c.name === 'plinth_session')?.httpOnly).toBe(true)
    // The token the link put in the address was ended by the trade.
    const redirected = await fetch(link, { redirect: 'manual' })
    expect(redirected.status).toBe(400) // the link itself is spent
    expect((await problems()).filter((p) => !p.includes('status of 401'))).toEqual([])
  })

  it('renew-session ends the token it was called with and answers a new one', async () => {
    const renewed = await server.request('POST', '/api/auth/renew-session', { token: owner.token })
    expect(renewed.status, renewed.text).toBe(200)
    expect(renewed.body.token).not.toBe(owner.token)
    expect((await server.request('GET', '/api/auth/get-session', { token: owner.token })).status).toBe(401)
    expect((await server.request('GET', '/api/auth/get-session', { token: renewed.body.token })).status).toBe(200)
    owner = { ...owner, token: renewed.body.token }
  })

  it('an API key cannot be renewed into a session', async () => {
    const key = await server.request('POST', '/api/auth/api-keys', {
      token: owner.token,
      body: { label: 'k', capabilities: ['schema/*:read'] },
    })
    const renewed = await server.request('POST', '/api/auth/renew-session', { token: key.body.raw })
    expect(renewed.status).toBe(401)
    expect(renewed.text).not.toMatch(/"token"/)
  })
})
