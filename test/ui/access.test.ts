import { Secret, TOTP, URI } from 'otpauth'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  browserMissing,
  expectAccessible,
  launchBrowser,
  signInThroughUi,
  type Browser,
  type UiPage,
} from '../support/browser.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'

// The access screens in headless Chromium on a fresh server: a role made and given a grant whose
// item_filter keeps a user to their own rows (through the item_filter editor), a user made with it who
// then signs in (a second browser) and sees only their rows; users banned, unbanned, moved and deleted;
// an API key's raw value shown once; two-factor turned on and off with codes computed here. Each screen is
// checked with axe and for console errors and policy violations.

let server: TestServer
let browser: Browser
let owner: Account
const reader = { email: 'reader@example.com', name: 'Rita Reader', password: 'reader password' }
let readerId = ''

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 })

/** Problems the page met, but for the refusals a test provoked on purpose (a browser logs every 4xx). */
const unexpected = async (ui: UiPage, ...provoked: number[]) =>
  (await ui.problems()).filter(
    (p) => !p.includes('status of 401') && !provoked.some((status) => p.includes(`status of ${status}`)),
  )

async function openSignedIn(path: string, options: { colorScheme?: 'dark'; width?: number } = {}) {
  const ui = await browser.open(path, options)
  return ui
}

/** The status line or alert text after an action, once it says something. */
async function said(page: Page, role: 'status' | 'alert', pattern: RegExp) {
  await expect
    .poll(async () => (await page.getByRole(role).allTextContents()).join(' | '), { timeout: 15_000 })
    .toMatch(pattern)
}

beforeAll(async () => {
  server = await startServer({ AUTH_RATE_LIMIT: '200', PASSWORD_HASH_ITERATIONS: '1000' })
  owner = await signUpOwner(server)
  const made = await server.request('POST', '/api/v1/collections', {
    token: owner.token,
    body: {
      name: 'notes',
      fields: [
        { name: 'title', type: 'text', required: false },
        { name: 'author', type: 'text', required: false },
      ],
    },
  })
  expect(made.status, made.text).toBe(201)
  if (browserMissing) return
  browser = await launchBrowser(server)
  const { page } = await browser.open('/_/')
  await signInThroughUi(page, owner.email, owner.password)
  await page.close()
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

describe.skipIf(browserMissing)('admin UI: users, roles, grants, API keys, the account', () => {
  let roleId = ''

  it('creates a role, then gives it a grant limited to the user’s own rows with the item_filter editor', async () => {
    const ui = await openSignedIn('/_/roles')
    const { page } = ui
    await page.getByRole('heading', { name: 'Roles' }).waitFor()
    // Built-in roles are listed and marked.
    await page.getByRole('link', { name: 'viewer' }).waitFor()
    expect(await page.getByText('built-in').count()).toBeGreaterThanOrEqual(6)
    await expectAccessible(page, 'roles')

    // A bad name is refused by the server, in words, under the field.
    await page.getByRole('button', { name: 'New role' }).click()
    await expectAccessible(page, 'new role dialog')
    await page.getByLabel('Name').fill('Bad Name')
    await page.getByRole('button', { name: 'Create the role' }).click()
    await said(page, 'alert', /lower-case/)
    await page.getByLabel('Name').fill('note-reader')
    await page.getByLabel('Description').fill('Reads their own notes')
    await page.getByRole('button', { name: 'Create the role' }).click()
    await page.getByRole('heading', { name: 'Role note-reader' }).waitFor()
    roleId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)
    const roles = await server.request('GET', '/api/v1/roles', { token: owner.token })
    const stored = (roles.body.data as { id: string; name: string; description: string; adminAccess: boolean }[]).find(
      (r) => r.name === 'note-reader',
    )!
    expect(stored).toMatchObject({ id: roleId, description: 'Reads their own notes', adminAccess: false })
    await page.getByText('No grants: this role may do nothing.').waitFor()
    await expectAccessible(page, 'role detail')

    // A filter on a field the collection lacks: the server's 422 is shown, naming the grant's filter.
    await page.getByRole('button', { name: 'Add a grant' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByLabel('Resource').fill('collections/notes')
    await dialog.getByLabel('Action', { exact: true }).selectOption('read')
    await dialog.getByRole('button', { name: 'Add a condition' }).click()
    await dialog.getByLabel('Field', { exact: true }).fill('nope')
    await dialog.getByLabel('Value', { exact: true }).fill('x')
    await expectAccessible(page, 'grant dialog')
    await dialog.getByRole('button', { name: 'Add the grant' }).click()
    await said(page, 'alert', /nope/)
    // …and under the item_filter editor, in the server's words.
    await expect.poll(() => dialog.locator('.access-filter .field-error').textContent()).toMatch(/nope/)
    expect((await server.request('GET', `/api/v1/roles/${roleId}/grants`, { token: owner.token })).body.data).toEqual(
      [],
    )

    // Now the real one: author equals $CURRENT_USER.
    await dialog.getByLabel('Field', { exact: true }).fill('author')
    await dialog.getByLabel('Value is').selectOption('variable')
    await dialog.getByLabel('Value', { exact: true }).selectOption('$CURRENT_USER')
    await dialog.getByRole('button', { name: 'Add the grant' }).click()
    await said(page, 'status', /The grant was added/)
    const grants = await server.request('GET', `/api/v1/roles/${roleId}/grants`, { token: owner.token })
    expect(grants.body.data).toEqual([
      {
        resource: 'collections/notes',
        action: 'read',
        item_filter: { author: { _eq: '$CURRENT_USER' } },
        fields: null,
      },
    ])
    await page.getByText('{"author":{"_eq":"$CURRENT_USER"}}').waitFor()
    // The summary says it in words.
    await page.getByText('read: rows where author equals the signed-in user (id)').waitFor()

    // Editing the grant reads the filter back into rows, and a column allowlist is saved.
    await page.getByRole('button', { name: 'Edit grant 1, collections/notes read' }).click()
    expect(await dialog.getByLabel('Field', { exact: true }).inputValue()).toBe('author')
    expect(await dialog.getByLabel('Value', { exact: true }).inputValue()).toBe('$CURRENT_USER')
    await dialog.getByLabel('Only some fields').check()
    await dialog.getByLabel('title', { exact: true }).check()
    await dialog.getByLabel('author', { exact: true }).check()
    await dialog.getByRole('button', { name: 'Save the grant' }).click()
    await said(page, 'status', /The grant was saved/)
    const edited = await server.request('GET', `/api/v1/roles/${roleId}/grants`, { token: owner.token })
    expect(edited.body.data).toEqual([
      {
        resource: 'collections/notes',
        action: 'read',
        item_filter: { author: { _eq: '$CURRENT_USER' } },
        fields: ['title', 'author'],
      },
    ])

    // A second grant added and removed (with confirmation).
    await page.getByRole('button', { name: 'Add a grant' }).click()
    await dialog.getByLabel('Resource').fill('system/files')
    await dialog.getByLabel('Action', { exact: true }).selectOption('read')
    await dialog.getByRole('button', { name: 'Add the grant' }).click()
    await said(page, 'status', /The grant was added/)
    await page.getByRole('button', { name: 'Remove grant 2, system/files read' }).click()
    await expectAccessible(page, 'remove grant dialog')
    await page.getByRole('button', { name: 'Remove the grant' }).click()
    await said(page, 'status', /The grant was removed/)
    expect(
      (await server.request('GET', `/api/v1/roles/${roleId}/grants`, { token: owner.token })).body.data,
    ).toHaveLength(1)
    expect(await unexpected(ui, 400, 422)).toEqual([])
  })

  it('creates a user with that role; the server’s refusals are shown with the field', async () => {
    const ui = await openSignedIn('/_/users')
    const { page } = ui
    await page.getByRole('heading', { name: 'Users' }).waitFor()
    await page.getByRole('cell', { name: 'Owner owner@example.com you' }).waitFor()
    await expectAccessible(page, 'users')
    await page.getByRole('button', { name: 'New user' }).click()
    const dialog = page.getByRole('dialog')
    await expectAccessible(page, 'new user dialog')
    await dialog.getByLabel('Email').fill(reader.email)
    await dialog.getByLabel('Name', { exact: true }).fill(reader.name)
    await dialog.getByLabel('Password').fill('short')
    await dialog.getByLabel('Role').selectOption('note-reader')
    await dialog.getByRole('button', { name: 'Create the user' }).click()
    await said(page, 'alert', /8 characters/)
    await expect.poll(() => dialog.locator('.field-error').allTextContents()).toEqual([expect.stringMatching(/8/)])
    await expectAccessible(page, 'new user dialog with an error')
    await dialog.getByLabel('Password').fill(reader.password)
    await dialog.getByRole('button', { name: 'Create the user' }).click()
    await said(page, 'status', /reader@example\.com was created/)
    const users = await server.request('GET', '/api/v1/users', { token: owner.token })
    const stored = (users.body.data as { id: string; email: string; role: string; name: string }[]).find(
      (u) => u.email === reader.email,
    )!
    expect(stored).toMatchObject({ role: 'note-reader', name: reader.name })
    readerId = stored.id

    // The same email again: 409, in words.
    await page.getByRole('button', { name: 'New user' }).click()
    await dialog.getByLabel('Email').fill(reader.email)
    await dialog.getByLabel('Password').fill(reader.password)
    await dialog.getByRole('button', { name: 'Create the user' }).click()
    await said(page, 'alert', /\w/)
    expect(await dialog.getByRole('alert').textContent()).not.toMatch(/^The server refused/)
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    expect(await unexpected(ui, 400, 409)).toEqual([])
  })

  it('the user signs in (a second browser) and sees only their own rows', async () => {
    for (const [title, author] of [
      ['mine 1', readerId],
      ['mine 2', readerId],
      ['the owner’s', owner.id],
    ] as const) {
      const made = await server.request('POST', '/api/v1/collections/notes/records', {
        token: owner.token,
        body: { title, author },
      })
      expect(made.status, made.text).toBe(201)
    }
    const second = await launchBrowser(server)
    try {
      const ui = await second.open('/_/')
      await signInThroughUi(ui.page, reader.email, reader.password)
      await ui.page.getByRole('link', { name: reader.name }).waitFor()
      // The reader's own account screen: no refusal noise (it asks nothing it may not read).
      await ui.page.goto(`${server.url}/_/account`)
      await ui.page.getByRole('heading', { name: 'Your account' }).waitFor()
      await ui.page.getByText('note-reader').waitFor()
      await expectAccessible(ui.page, 'account (reader)')
      const session = (await second.context.cookies(server.url)).find((c) => c.name === 'plinth_session')!
      const listed = await server.request('GET', '/api/v1/collections/notes/records', {
        headers: { cookie: `plinth_session=${session.value}` },
      })
      expect(listed.status, listed.text).toBe(200)
      const rows = listed.body.data as { title: string; author: string }[]
      expect(rows.map((r) => r.title).sort()).toEqual(['mine 1', 'mine 2'])
      expect(rows.every((r) => r.author === readerId)).toBe(true)
      // The owner sees all three.
      const all = await server.request('GET', '/api/v1/collections/notes/records', { token: owner.token })
      expect(all.body.data).toHaveLength(3)
      // The overview it landed on and the shared menu ask for what this role may not read (403, shown as a
      // note or left out); nothing else may fail.
      expect(await unexpected(ui, 403)).toEqual([])
    } finally {
      await second.close()
    }
  })

  it('changes a user’s role, bans and unbans, and deletes with confirmation', async () => {
    const made = await server.request('POST', '/api/v1/users', {
      token: owner.token,
      body: { email: 'temp@example.com', password: 'temp password', role: 'viewer', name: 'Temp' },
    })
    expect(made.status, made.text).toBe(201)
    const id = made.body.data.id as string
    const get = async () => (await server.request('GET', `/api/v1/users/${id}`, { token: owner.token })).body.data
    const ui = await openSignedIn('/_/users')
    const { page } = ui
    await page.getByLabel('Role of temp@example.com', { exact: true }).selectOption('editor')
    await page.getByRole('button', { name: 'Change the role of temp@example.com' }).click()
    await said(page, 'status', /now has the role editor/)
    expect((await get()).role).toBe('editor')
    await page.getByRole('button', { name: 'Ban temp@example.com' }).click()
    await said(page, 'status', /temp@example\.com is banned/)
    expect((await get()).banned).toBe(true)
    await page.getByRole('button', { name: 'Unban temp@example.com' }).click()
    await said(page, 'status', /may sign in again/)
    expect((await get()).banned).toBe(false)
    // Deleting yourself as the only owner, or a super_admin... the server decides; here: an ordinary delete.
    await page.getByRole('button', { name: 'Delete temp@example.com' }).click()
    await expectAccessible(page, 'delete user dialog')
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click()
    expect((await server.request('GET', `/api/v1/users/${id}`, { token: owner.token })).status).toBe(200)
    await page.getByRole('button', { name: 'Delete temp@example.com' }).click()
    await page.getByRole('button', { name: 'Delete the user' }).click()
    await said(page, 'status', /temp@example\.com was deleted/)
    expect((await server.request('GET', `/api/v1/users/${id}`, { token: owner.token })).status).toBe(404)
    await expect.poll(() => page.getByText('temp@example.com', { exact: true }).count()).toBe(0)
    expect(await unexpected(ui)).toEqual([])
  })

  it('pages through the users, 25 at a time', async () => {
    for (let i = 0; i < 25; i++) {
      const made = await server.request('POST', '/api/v1/users', {
        token: owner.token,
        body: { email: `many-${i}@example.com`, password: 'many password', role: 'viewer' },
      })
      expect(made.status, made.text).toBe(201)
    }
    const ui = await openSignedIn('/_/users')
    const { page } = ui
    await page.getByText('Page 1 of 2 · 27 users').waitFor()
    expect(await page.locator('table.data tbody tr').count()).toBe(25)
    await page.getByRole('button', { name: 'Next page' }).click()
    await page.getByText('Page 2 of 2 · 27 users').waitFor()
    expect(await page.locator('table.data tbody tr').count()).toBe(2)
    expect(page.url()).toBe(`${server.url}/_/users?page=2`)
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true)
    await page.getByRole('button', { name: 'Previous page' }).click()
    await page.getByText('Page 1 of 2 · 27 users').waitFor()
    expect(await unexpected(ui)).toEqual([])
  })

  it('roles: edited from the list, a role in use is not deleted (in words), an unused one is', async () => {
    const ui = await openSignedIn('/_/roles')
    const { page } = ui
    await page.getByRole('button', { name: 'Edit note-reader' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByLabel('Description').fill('Reads only their own notes')
    await dialog.getByRole('button', { name: 'Save the role' }).click()
    await said(page, 'status', /The role note-reader was saved/)
    await page.getByRole('cell', { name: 'Reads only their own notes' }).waitFor()
    const stored = async () =>
      (
        (await server.request('GET', '/api/v1/roles', { token: owner.token })).body.data as {
          name: string
          description: string
        }[]
      ).map((r) => r.name)
    // A built-in role's name and admin access are fixed in the form.
    await page.getByRole('button', { name: 'Edit viewer' }).click()
    expect(await dialog.getByLabel('Name').isDisabled()).toBe(true)
    expect(await dialog.getByLabel('Admin access').isDisabled()).toBe(true)
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    expect(await page.getByRole('button', { name: 'Delete viewer' }).count()).toBe(0)
    // note-reader is held by the reader: the server's 409 is shown and the role stays.
    await page.getByRole('button', { name: 'Delete note-reader' }).click()
    await page.getByRole('button', { name: 'Delete the role' }).click()
    await said(page, 'alert', /\w/)
    expect(await page.getByRole('dialog').getByRole('alert').textContent()).not.toMatch(/^The server refused/)
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click()
    expect(await stored()).toContain('note-reader')
    // A new unused role is deleted.
    await page.getByRole('button', { name: 'New role' }).click()
    await dialog.getByLabel('Name').fill('short-lived')
    await dialog.getByRole('button', { name: 'Create the role' }).click()
    await page.getByRole('heading', { name: 'Role short-lived' }).waitFor()
    await page.getByRole('link', { name: 'All roles' }).click()
    await page.getByRole('button', { name: 'Delete short-lived' }).click()
    await page.getByRole('button', { name: 'Delete the role' }).click()
    await said(page, 'status', /The role short-lived was deleted/)
    expect(await stored()).not.toContain('short-lived')
    // An administrator's role: grants do not apply, and none are offered for editing.
    await page.getByRole('link', { name: 'admin', exact: true }).click()
    await page.getByText('This role has admin access').waitFor()
    expect(await page.getByRole('button', { name: 'Add a grant' }).count()).toBe(0)
    await expectAccessible(page, 'admin role')
    expect(await unexpected(ui, 409)).toEqual([])
  })

  it('the item_filter editor: any of several conditions, and JSON for what rows cannot show', async () => {
    const ui = await openSignedIn(`/_/roles/${roleId}`)
    const { page } = ui
    const dialog = page.getByRole('dialog')
    await page.getByRole('button', { name: 'Add a grant' }).click()
    await dialog.getByLabel('Resource').fill('collections/notes')
    await dialog.getByLabel('Action', { exact: true }).selectOption('update')
    await dialog.getByRole('button', { name: 'Add a condition' }).click()
    await dialog.getByRole('button', { name: 'Add a condition' }).click()
    const first = dialog.getByRole('group', { name: 'Condition 1' })
    const second = dialog.getByRole('group', { name: 'Condition 2' })
    await first.getByLabel('Field').fill('author')
    await first.getByLabel('Value is').selectOption('variable')
    await second.getByLabel('Field').fill('title')
    await second.getByLabel('Operator').selectOption('_in')
    await second.getByLabel('Values (comma-separated)').fill('draft, open')
    await dialog.getByLabel('A row is reached when it matches').selectOption('any')
    await dialog.getByRole('button', { name: 'Add the grant' }).click()
    await said(page, 'status', /The grant was added/)
    const grants = async () =>
      (await server.request('GET', `/api/v1/roles/${roleId}/grants`, { token: owner.token })).body.data as {
        item_filter: unknown
      }[]
    expect((await grants())[1]!.item_filter).toEqual({
      _or: [{ author: { _eq: '$CURRENT_USER' } }, { title: { _in: ['draft', 'open'] } }],
    })
    await page
      .getByText('update: rows where author equals the signed-in user (id) or title is one of draft, open')
      .waitFor()
    // Reopened, it reads back as rows; as JSON, a nested filter is saved as written.
    await page.getByRole('button', { name: 'Edit grant 2, collections/notes update' }).click()
    expect(await dialog.getByLabel('A row is reached when it matches').inputValue()).toBe('any')
    await dialog.getByRole('button', { name: 'Edit as JSON' }).click()
    const nested = { _and: [{ author: { _eq: '$CURRENT_USER' } }, { _or: [{ title: 'a' }, { title: 'b' }] }] }
    await dialog.getByLabel('Filter as JSON (object format)').fill(JSON.stringify(nested))
    await dialog.getByRole('button', { name: 'Edit as rows' }).click()
    await dialog.getByText('This filter cannot be shown as rows').waitFor()
    await expectAccessible(page, 'filter as JSON')
    await dialog.getByRole('button', { name: 'Save the grant' }).click()
    await said(page, 'status', /The grant was saved/)
    expect((await grants())[1]!.item_filter).toEqual(nested)
    expect(await unexpected(ui)).toEqual([])
  })

  it('an API key: created with capabilities and an expiry, its raw value shown once, then revoked', async () => {
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url })
    const ui = await openSignedIn('/_/keys')
    const { page } = ui
    await page.getByRole('heading', { name: 'API keys' }).waitFor()
    await page.getByText('No API keys yet.').waitFor()
    await expectAccessible(page, 'keys')
    await page.getByRole('button', { name: 'New API key' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByLabel('Label').fill('notes export')
    // None chosen: refused before sending.
    await dialog.getByRole('button', { name: 'Create the key' }).click()
    await said(page, 'alert', /at least one capability/)
    await dialog.getByLabel('Resource').fill('collections/notes')
    await dialog.getByLabel('Action').selectOption('read')
    await dialog.getByRole('button', { name: 'Add the capability' }).click()
    await dialog.getByRole('list', { name: 'Chosen capabilities' }).getByText('collections/notes:read').waitFor()
    await dialog.getByLabel('Expires').selectOption('7')
    await expectAccessible(page, 'new key dialog')
    const before = Math.floor(Date.now() / 1000)
    await dialog.getByRole('button', { name: 'Create the key' }).click()
    await page.getByRole('heading', { name: 'Your new API key' }).waitFor()
    await page.getByText('you will not see it again').waitFor()
    const raw = (await page.getByTestId('raw-key').textContent())!.trim()
    expect(raw).toMatch(/^sk-/)
    await expectAccessible(page, 'raw key dialog')
    await page.getByRole('button', { name: 'Copy', exact: true }).click()
    await said(page, 'status', /Copied to the clipboard/)
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(raw)
    await page.getByRole('button', { name: 'I have copied it' }).click()
    // Stored as asked, and it works.
    const keys = await server.request('GET', '/api/auth/api-keys', { token: owner.token })
    expect(keys.body).toHaveLength(1)
    expect(keys.body[0]).toMatchObject({ label: 'notes export', capabilities: ['collections/notes:read'] })
    expect(keys.body[0].expires_at).toBeGreaterThanOrEqual(before + 7 * 86400 - 5)
    expect(keys.body[0].expires_at).toBeLessThanOrEqual(before + 7 * 86400 + 60)
    expect((await server.request('GET', '/api/v1/collections/notes/records', { token: raw })).status).toBe(200)
    // The list shows it; the raw value is nowhere on the page, now or after a reload.
    await page.getByRole('cell', { name: 'notes export', exact: true }).waitFor()
    await page.getByRole('cell', { name: 'you', exact: true }).waitFor()
    expect(await page.content()).not.toContain(raw)
    await page.reload()
    await page.getByRole('cell', { name: 'notes export', exact: true }).waitFor()
    expect(await page.content()).not.toContain(raw)
    // Revoked, after a confirmation.
    await page.getByRole('button', { name: 'Revoke notes export' }).click()
    await expectAccessible(page, 'revoke dialog')
    await page.getByRole('button', { name: 'Revoke the key' }).click()
    await said(page, 'status', /was revoked/)
    expect((await server.request('GET', '/api/v1/collections/notes/records', { token: raw })).status).toBe(401)
    await page.getByText('No API keys yet.').waitFor()
    expect(await unexpected(ui)).toEqual([])
  })

  it('two-factor: enrol, a wrong code refused, confirmed with a code; turned off with a code', async () => {
    const ui = await openSignedIn('/_/account')
    const { page } = ui
    await page.getByRole('heading', { name: 'Your account' }).waitFor()
    await page.getByText('owner@example.com').waitFor()
    await page.getByText('Two-factor sign-in is off.').waitFor()
    await expectAccessible(page, 'account')
    await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click()
    const secret = (await page.getByTestId('totp-secret').textContent())!.trim()
    const uri = (await page.getByTestId('totp-uri').textContent())!.trim()
    expect(uri).toMatch(/^otpauth:\/\/totp\//)
    const parsed = URI.parse(uri) as TOTP
    expect(parsed.secret.base32).toBe(secret)
    await expectAccessible(page, 'account, enrolling')
    const totp = new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 })
    const now = totp.generate()
    await page.getByLabel('Code from the app').fill(now === '000000' ? '111111' : '000000')
    await page.getByRole('button', { name: 'Confirm and turn on' }).click()
    await said(page, 'alert', /Invalid code/)
    await page.getByLabel('Code from the app').fill(totp.generate())
    await page.getByRole('button', { name: 'Confirm and turn on' }).click()
    await said(page, 'status', /Two-factor sign-in is on\./)
    expect(
      (await server.request('GET', `/api/v1/users/${owner.id}`, { token: owner.token })).body.data.totpEnabled,
    ).toBe(true)
    // A code is accepted once: turn it off with the next step's (one step of drift is accepted).
    await page.getByLabel('Current code from the app').fill(totp.generate({ timestamp: Date.now() + 30_000 }))
    await page.getByRole('button', { name: 'Turn off two-factor sign-in' }).click()
    await said(page, 'status', /Two-factor sign-in is off\./)
    expect(
      (await server.request('GET', `/api/v1/users/${owner.id}`, { token: owner.token })).body.data.totpEnabled,
    ).toBe(false)
    expect(await unexpected(ui, 400)).toEqual([])
  })

  it('dark scheme at 320 px: the screens stay accessible and nothing is wider than the screen', async () => {
    for (const path of ['/_/users', '/_/roles', `/_/roles/${roleId}`, '/_/keys', '/_/account']) {
      const ui = await browser.open(path, { colorScheme: 'dark', width: 320 })
      await ui.page.locator('h1').waitFor()
      await ui.page.locator('.page .table-wrap, .page .card, .page .empty').first().waitFor()
      await expectAccessible(ui.page, `${path} dark 320`)
      expect(await ui.page.evaluate('document.documentElement.scrollWidth'), path).toBeLessThanOrEqual(320)
      expect(await unexpected(ui)).toEqual([])
      await ui.page.close()
    }
  })
})
