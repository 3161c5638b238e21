import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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

// The collections screens in headless Chromium on a fresh server: a collection made through the "New
// collection" dialog with several field types (checked against what the API stored), then the schema
// editor: a field added, an enum value added, a compound index, and two changes the server refuses, shown
// with its message at the field. Every screen and dialog passes axe; no console error or policy violation
// beyond the refusals the test asks for.

let server: TestServer
let browser: Browser
let owner: Account
let ui: UiPage

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  // A target for a relation, made through the API.
  const authors = await server.request('POST', '/api/v1/collections', {
    token: owner.token,
    body: { name: 'authors', fields: [{ name: 'name', type: 'text', required: true }] },
  })
  expect(authors.status, authors.text).toBe(201)
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

async function stored(name: string) {
  const reply = await server.request('GET', `/api/v1/collections/${name}`, { token: owner.token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data as {
    storageType: string
    fields: Record<string, unknown>[]
    indexes: { fields: string[]; unique: boolean }[]
    accessControl: { preset: string } | null
    schemaVersion: number
  }
}

const field = (fields: Record<string, unknown>[], name: string) => fields.find((f) => f.name === name)

/** Fills the field editor of the open dialog with one field and adds it to the list. */
async function addDraftField(page: Page, name: string, type: string, more?: () => Promise<void>) {
  const dialog = page.getByRole('dialog')
  await dialog.getByLabel('Field name').fill(name)
  await dialog.getByLabel('Type', { exact: true }).selectOption(type)
  await more?.()
  await dialog.getByRole('button', { name: 'Add field', exact: true }).click()
  await dialog.getByRole('button', { name: `Edit field ${name}` }).waitFor()
}

/** Reviews the change in the open dialog, then applies it. */
async function reviewAndApply(page: Page, apply = 'Apply change') {
  const dialog = page.getByRole('dialog')
  await dialog.getByRole('button', { name: 'Review change' }).click()
  await dialog.getByRole('heading', { name: 'What this change does' }).waitFor()
  await dialog.getByRole('button', { name: apply }).click()
  await dialog.waitFor({ state: 'detached' })
}

describe.skipIf(browserMissing)('admin UI: collections and the schema editor', () => {
  it('lists collections and makes one with several field types through the dialog', { timeout: 180_000 }, async () => {
    browser = await launchBrowser(server)
    ui = await browser.open('/_/collections')
    const { page } = ui
    await signInThroughUi(page, owner.email, owner.password)
    await page.getByRole('heading', { name: 'Collections', level: 1 }).waitFor()
    await page.getByRole('link', { name: 'authors', exact: true }).waitFor()
    await expectAccessible(page, 'collections list')

    await page.getByRole('button', { name: 'New collection' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByRole('heading', { name: 'New collection' }).waitFor()
    await expectAccessible(page, 'new collection dialog')
    await dialog.getByLabel('Name', { exact: true }).fill('posts')
    await dialog.getByLabel('Storage type').selectOption('kv')
    await dialog.getByLabel('Access preset').selectOption('private')
    // Every one of the 21 field types is offered.
    await expect.poll(() => dialog.getByLabel('Type', { exact: true }).locator('option').count()).toBe(21)

    await addDraftField(page, 'title', 'text', async () => {
      await dialog.getByLabel('Required').check()
      await dialog.getByLabel('Maximum length').fill('200')
    })
    await addDraftField(page, 'status', 'enum', async () => {
      await dialog.getByLabel('Values').fill('draft\npublished')
      await dialog.getByLabel('Default value (optional)').fill('draft')
    })
    await addDraftField(page, 'views', 'integer', async () => {
      await dialog.getByLabel('Minimum', { exact: true }).fill('0')
    })
    await addDraftField(page, 'price', 'decimal')
    await addDraftField(page, 'published_on', 'date')
    await addDraftField(page, 'featured', 'boolean')
    await addDraftField(page, 'meta', 'json')
    await addDraftField(page, 'author', 'relation', async () => {
      await dialog.getByLabel('Target collection').selectOption('authors')
      await dialog.getByLabel('Display field').selectOption('name')
      await dialog.getByLabel('When the target is deleted').selectOption('cascade')
    })
    await addDraftField(page, 'reviewer', 'relation', async () => {
      await dialog.getByLabel('Target collection').selectOption('users')
    })
    await addDraftField(page, 'author_name', 'lookup', async () => {
      await dialog.getByLabel('Through relation').selectOption('author')
      await dialog.getByLabel('Field of the target').selectOption('name')
    })
    await expectAccessible(page, 'new collection dialog with fields')
    await dialog.getByRole('button', { name: 'Create collection' }).click()
    await page.getByRole('heading', { name: 'Schema: posts' }).waitFor()
    expect(new URL(page.url()).pathname).toBe('/_/collections/posts/schema')

    const posts = await stored('posts')
    expect(posts.storageType).toBe('kv')
    expect(posts.accessControl?.preset).toBe('private')
    expect(posts.fields.map((f) => [f.name, f.type])).toEqual([
      ['title', 'text'],
      ['status', 'enum'],
      ['views', 'integer'],
      ['price', 'decimal'],
      ['published_on', 'date'],
      ['featured', 'boolean'],
      ['meta', 'json'],
      ['author', 'relation'],
      ['reviewer', 'relation'],
      ['author_name', 'lookup'],
    ])
    expect(field(posts.fields, 'title')).toMatchObject({ required: true, validationRules: { maxLength: 200 } })
    expect(field(posts.fields, 'status')).toMatchObject({ enumValues: ['draft', 'published'], defaultValue: 'draft' })
    expect(field(posts.fields, 'views')).toMatchObject({ validationRules: { min: 0 } })
    expect(field(posts.fields, 'author')).toMatchObject({
      relationConfig: {
        targetCollection: 'authors',
        relationType: 'belongsTo',
        displayField: 'name',
        onDelete: 'cascade',
      },
    })
    expect(field(posts.fields, 'reviewer')).toMatchObject({ relationConfig: { targetCollection: 'users' } })
    expect(field(posts.fields, 'author_name')).toMatchObject({
      lookupConfig: { relationField: 'author', targetField: 'name' },
    })

    // The list shows it, with its storage type and field count.
    await page.getByRole('link', { name: 'All collections' }).click()
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'posts', exact: true }) })
    await expect.poll(() => row.textContent()).toContain('kv')
    expect(await row.textContent()).toContain('10')
    await row.getByRole('link', { name: /Edit schema/ }).click()
    await page.getByRole('heading', { name: 'Schema: posts' }).waitFor()
    await expectAccessible(page, 'schema editor')
    expect((await ui.problems()).filter((p) => !p.includes('status of 401'))).toEqual([])
  })

  it('adds a field, an enum value and a compound index through the preview', { timeout: 180_000 }, async () => {
    const { page } = ui
    await page.getByRole('button', { name: 'Add field' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByLabel('Field name').fill('summary')
    await dialog.getByLabel('Type', { exact: true }).selectOption('richtext')
    await expectAccessible(page, 'add field dialog')
    await dialog.getByRole('button', { name: 'Review change' }).click()
    await expect.poll(() => dialog.getByRole('status').textContent()).toContain('Adds the field summary.')
    await dialog.getByRole('button', { name: 'Apply change' }).click()
    await dialog.waitFor({ state: 'detached' })
    await page.getByRole('row', { name: /summary/ }).waitFor()
    expect(field((await stored('posts')).fields, 'summary')).toMatchObject({ type: 'richtext' })

    await page.getByRole('button', { name: 'Edit field status' }).click()
    await dialog.getByLabel('Values').fill('draft\npublished\narchived')
    await reviewAndApply(page)
    expect(field((await stored('posts')).fields, 'status')).toMatchObject({
      enumValues: ['draft', 'published', 'archived'],
      defaultValue: 'draft',
    })

    // A type change within its group: the editor offers only the number types for a decimal field.
    await page.getByRole('button', { name: 'Edit field price' }).click()
    const types = dialog.getByLabel('Type', { exact: true })
    await expect.poll(() => types.locator('option').allTextContents()).toEqual(['Integer', 'Decimal', 'Number'])
    await types.selectOption('number')
    await reviewAndApply(page)
    expect(field((await stored('posts')).fields, 'price')).toMatchObject({ type: 'number' })

    await page.getByRole('button', { name: 'Add index' }).click()
    await dialog.getByLabel('Fields, in order').fill('status, -views')
    await reviewAndApply(page)
    await page.getByRole('cell', { name: 'status, -views', exact: true }).waitFor()
    expect((await stored('posts')).indexes).toEqual([
      expect.objectContaining({ fields: ['status', '-views'], unique: false }),
    ])
    await expectAccessible(page, 'schema editor with an index')
    expect((await ui.problems()).filter((p) => !p.includes('status of 401'))).toEqual([])
  })

  it('a change the server refuses is shown with its message at the field', { timeout: 180_000 }, async () => {
    const { page } = ui
    const dialog = page.getByRole('dialog')
    // A record with no views: making views required is refused by the rows.
    const record = await server.request('POST', '/api/v1/collections/posts/records', {
      token: owner.token,
      body: { title: 'Hello' },
    })
    expect(record.status, record.text).toBe(201)
    const before = (await stored('posts')).schemaVersion
    await page.getByRole('button', { name: 'Edit field views' }).click()
    await dialog.getByLabel('Required').check()
    await dialog.getByRole('button', { name: 'Review change' }).click()
    const alert = dialog.getByRole('alert').first()
    await expect.poll(() => alert.textContent()).toMatch(/views/)
    expect(await dialog.getByRole('button', { name: 'Apply change' }).count()).toBe(0)
    const note = await dialog.locator('.problem').textContent()
    expect(note).toContain('(views)')
    await expectAccessible(page, 'refused change')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    expect((await stored('posts')).schemaVersion).toBe(before)

    // A field named like an existing one: the server's 400, at the name input.
    await page.getByRole('button', { name: 'Add field' }).click()
    await dialog.getByLabel('Field name').fill('title')
    await dialog.getByRole('button', { name: 'Review change' }).click()
    await expect.poll(() => dialog.locator('.field-error').first().textContent()).toMatch(/title/)
    expect(await dialog.getByLabel('Field name').getAttribute('aria-invalid')).toBe('true')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    expect((await stored('posts')).schemaVersion).toBe(before)
    // Removing an enum value records hold: refused until the removed value is mapped (enumChanges).
    await page.getByRole('button', { name: 'Edit field status' }).click()
    await dialog.getByLabel('Values').fill('published\narchived')
    await dialog.getByRole('button', { name: 'Review change' }).click()
    await expect.poll(() => dialog.locator('.problem').textContent()).toContain('draft')
    await dialog.getByLabel('Records holding “draft” become').selectOption('published')
    // Its default value was the removed one: the server refuses it, naming the field; a kept value is accepted.
    await dialog.getByRole('button', { name: 'Review change' }).click()
    await expect.poll(() => dialog.locator('.problem').textContent()).toMatch(/defaultValue/)
    await dialog.getByLabel('Default value (optional)').fill('published')
    await dialog.getByRole('button', { name: 'Review change' }).click()
    await expect.poll(() => dialog.getByRole('status').textContent()).toContain('1 record rewritten')
    await dialog.getByRole('button', { name: 'Apply change' }).click()
    await dialog.waitFor({ state: 'detached' })
    const rewritten = await server.request('GET', `/api/v1/collections/posts/records/${record.body.id}`, {
      token: owner.token,
    })
    expect(rewritten.body.data.status).toBe('published')
    expect(field((await stored('posts')).fields, 'status')).toMatchObject({ enumValues: ['published', 'archived'] })

    // The duplicate name's 400 is the one refusal the browser logs; nothing else.
    expect((await ui.problems()).filter((p) => !/status of (401|400)/.test(p))).toEqual([])
  })

  it('renames and drops a field, changes the access preset, deletes the collection after confirming', {
    timeout: 180_000,
  }, async () => {
    const { page } = ui
    const dialog = page.getByRole('dialog')
    await page.getByRole('button', { name: 'Rename field summary' }).click()
    await dialog.getByLabel('New name').fill('abstract')
    await reviewAndApply(page, 'Rename field')
    await page.getByRole('button', { name: 'Drop field featured' }).click()
    await dialog.getByRole('button', { name: 'Review change' }).click()
    await expect.poll(() => dialog.getByRole('status').textContent()).toContain('Drops the field featured')
    await dialog.getByRole('button', { name: 'Drop field' }).click()
    await dialog.waitFor({ state: 'detached' })
    const posts = await stored('posts')
    expect(posts.fields.map((f) => f.name)).toContain('abstract')
    expect(posts.fields.map((f) => f.name)).not.toContain('featured')
    expect(posts.fields.map((f) => f.name)).not.toContain('summary')

    await page.getByLabel('Access preset').selectOption('team')
    await page.getByRole('button', { name: 'Save access' }).click()
    await expect.poll(async () => (await stored('posts')).accessControl?.preset).toBe('team')

    await page.getByRole('button', { name: 'Delete collection' }).click()
    await dialog.getByRole('heading', { name: 'Delete collection posts' }).waitFor()
    await expectAccessible(page, 'delete dialog')
    const confirm = dialog.getByRole('button', { name: 'Delete collection' })
    expect(await confirm.isDisabled()).toBe(true)
    await dialog.getByLabel('Type the collection’s name to confirm').fill('posts')
    await confirm.click()
    await page.getByRole('heading', { name: 'Collections', level: 1 }).waitFor()
    const gone = await server.request('GET', '/api/v1/collections/posts', { token: owner.token })
    expect(gone.status).toBe(404)
    expect((await ui.problems()).filter((p) => !/status of (401|400)/.test(p))).toEqual([])
  })

  it('a remote collection is made in a registered database binding chosen from the list', {
    timeout: 180_000,
  }, async () => {
    const binding = await server.request('POST', '/api/v1/databases', {
      token: owner.token,
      body: { name: 'archive-db', kind: 'sqlite' },
    })
    expect(binding.status, binding.text).toBe(201)
    const { page } = ui
    await page.getByRole('button', { name: 'New collection' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByLabel('Name', { exact: true }).fill('archive')
    await dialog.getByLabel('Storage type').selectOption('remote')
    await dialog.getByLabel('Database binding').selectOption({ label: 'archive-db (sqlite)' })
    // Enter in the field being drafted adds it (it does not create the collection yet).
    await dialog.getByLabel('Field name').fill('note')
    await dialog.getByLabel('Field name').press('Enter')
    await dialog.getByRole('button', { name: 'Edit field note' }).waitFor()
    expect(await dialog.isVisible()).toBe(true)
    await dialog.getByRole('button', { name: 'Create collection' }).click()
    await page.getByRole('heading', { name: 'Schema: archive' }).waitFor()
    const archive = await stored('archive')
    expect(archive.storageType).toBe('remote')
    expect((archive as unknown as { databaseId: string }).databaseId).toBe(binding.body.data.id)
    // A name the server refuses is shown at the name input.
    await page.getByRole('link', { name: 'All collections' }).click()
    await page.getByRole('button', { name: 'New collection' }).click()
    await dialog.getByLabel('Name', { exact: true }).fill('users')
    await dialog.getByRole('button', { name: 'Create collection' }).click()
    await expect.poll(() => dialog.getByRole('alert').first().textContent()).toMatch(/\w/)
    expect(await dialog.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    expect((await ui.problems()).filter((p) => !/status of (401|400)/.test(p))).toEqual([])
  })

  it('at 320 px in the dark the schema editor is accessible and nothing overflows the page', {
    timeout: 180_000,
  }, async () => {
    const { page } = await browser.open('/_/collections/authors/schema', { colorScheme: 'dark', width: 320 })
    await page.getByRole('heading', { name: 'Schema: authors' }).waitFor()
    await expectAccessible(page, 'schema editor, dark, 320 px')
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(320)
  })
})
