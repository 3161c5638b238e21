import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browserMissing, expectAccessible, launchBrowser, signInThroughUi, type Browser } from '../support/browser.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'

// The role page's preview with the records: "what can this role see", run through
// GET /api/v1/roles/:id/preview as a chosen person, in Chromium.

let server: TestServer
let owner: Account
let alice: Account
let browser: Browser
let writerId: string

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const made = await server.request('POST', '/api/v1/collections', {
    token: owner.token,
    body: {
      name: 'notes',
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'author', type: 'text', required: false },
      ],
    },
  })
  expect(made.status, made.text).toBe(201)
  const role = await server.request('POST', '/api/v1/roles', {
    token: owner.token,
    body: { name: 'writer', description: 'Writes notes' },
  })
  writerId = role.body.data.id
  await server.request('PUT', `/api/v1/roles/${writerId}/grants`, {
    token: owner.token,
    body: {
      grants: [{ resource: 'collections/notes', action: 'read', item_filter: { author: { _eq: '$CURRENT_USER' } } }],
    },
  })
  alice = await createAccount(server, owner.token, { role: 'writer', name: 'Alice Writer' })
  for (const [title, author] of [
    ['alice one', alice.id],
    ['alice two', alice.id],
    ['not hers', owner.id],
  ])
    await server.request('POST', '/api/v1/collections/notes/records', { token: owner.token, body: { title, author } })
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

describe.skipIf(browserMissing)('admin UI: what can this role see', () => {
  it('shows the rows a holder of the role reads, as the person chosen', async () => {
    browser = await launchBrowser(server)
    const { page, problems } = await browser.open(`/_/roles/${writerId}`)
    await signInThroughUi(page, owner.email, owner.password)
    const section = page.getByRole('region', { name: 'Preview with the records' })
    await section.waitFor()
    await section.getByLabel('Collection').selectOption('notes')
    await section.getByLabel('As the person').selectOption({ label: 'Alice Writer' })
    await section.getByRole('button', { name: 'Show what it sees' }).click()
    const table = section.getByRole('table')
    await table.waitFor()
    const cells = await table.getByRole('cell').allTextContents()
    expect(cells).toContain('alice one')
    expect(cells).toContain('alice two')
    expect(cells).not.toContain('not hers')
    await expectAccessible(page, 'role preview')
    // As the owner (who wrote one note, but holds not this role's rule for it): the rule reads $CURRENT_USER.
    await section.getByLabel('As the person').selectOption({ label: 'Me' })
    await section.getByRole('button', { name: 'Show what it sees' }).click()
    await expect.poll(async () => (await table.getByRole('cell').allTextContents()).includes('not hers')).toBe(true)
    expect((await problems()).filter((p) => !p.includes('status of 401'))).toEqual([])
  })
})
