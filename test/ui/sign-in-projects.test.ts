import { Secret, TOTP } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browserMissing, expectAccessible, launchBrowser, type Browser } from '../support/browser.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'

// Two parts of the admin UI's way in that the other files do not walk: signing in to an account with
// two-factor on (the code asked for after the password), and a super_admin's project switcher (every call
// then acts in the project chosen, X-Project-Id).

let server: TestServer
let owner: Account
let browser: Browser
let totp: TOTP

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const enrolled = await server.request('POST', '/api/auth/totp/enroll', { token: owner.token })
  totp = new TOTP({ secret: Secret.fromBase32(enrolled.body.secret), algorithm: 'SHA1', digits: 6, period: 30 })
  const confirmed = await server.request('POST', '/api/auth/totp/confirm', {
    token: owner.token,
    body: { code: totp.generate() },
  })
  expect(confirmed.status, confirmed.text).toBe(200)
  const project = await server.request('POST', '/api/v1/projects', {
    token: owner.token,
    body: { name: 'Second shop' },
  })
  expect(project.status, project.text).toBe(201)
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

describe.skipIf(browserMissing)('admin UI: two-factor sign-in and the project switcher', () => {
  it('asks for the code after the password, then signs in', async () => {
    browser = await launchBrowser(server)
    const { page, problems } = await browser.open('/_/')
    await page.getByLabel(/^Email/).fill(owner.email)
    await page.getByLabel('Password').fill(owner.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    const code = page.getByLabel('Code from your authenticator app')
    await code.waitFor()
    await expectAccessible(page, 'sign-in asking for the code')
    // The confirm used this step's code; the next step's is accepted (one step of drift).
    await code.fill(totp.generate({ timestamp: Date.now() + 30_000 }))
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('navigation', { name: 'Main' }).waitFor()
    // The account screen knows two-factor is on (get-session's totpEnabled).
    await page.getByRole('link', { name: 'Owner' }).click()
    await page.getByRole('button', { name: 'Turn off two-factor sign-in' }).waitFor()
    expect((await problems()).filter((p) => !/status of 40[13]/.test(p))).toEqual([])
  })

  it("switches projects: the collections listed are the chosen project's", async () => {
    await server.request('POST', '/api/v1/collections', {
      token: owner.token,
      body: { name: 'home_only', fields: [] },
    })
    const { page } = await browser.open('/_/collections')
    await page.getByRole('link', { name: 'home_only', exact: true }).waitFor()
    const switcher = page.getByLabel('Project')
    await switcher.selectOption({ label: 'Second shop' })
    await page.getByText('No collections').first().waitFor()
    expect(await page.getByRole('link', { name: 'home_only', exact: true }).count()).toBe(0)
    await expectAccessible(page, 'collections of the second project')
    await switcher.selectOption({ index: 0 })
    await page.getByRole('link', { name: 'home_only', exact: true }).waitFor()
  })
})
