import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browserMissing, expectAccessible, launchBrowser, signInThroughUi, type Browser } from '../support/browser.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'

// The builder resources in the admin UI: the project's shared menu (navigation tree) as the top of the
// sidebar, and saved views as tabs over the records grid, each opening the grid with its filter, sort and
// columns.

let server: TestServer
let owner: Account
let browser: Browser
let viewId: string

const api = async (method: string, path: string, body?: unknown) => {
  const reply = await server.request(method, path, { token: owner.token, body })
  expect(reply.status, `${method} ${path}: ${reply.text}`).toBeLessThan(300)
  return reply.body
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  await api('POST', '/api/v1/collections', {
    name: 'tasks',
    fields: [
      { name: 'title', type: 'text', required: true },
      { name: 'status', type: 'enum', required: false, enumValues: ['open', 'done'] },
    ],
  })
  for (const [title, status] of [
    ['Alpha', 'open'],
    ['Bravo', 'open'],
    ['Charlie', 'open'],
    ['Delta', 'done'],
  ])
    await api('POST', '/api/v1/collections/tasks/records', { title, status })
  viewId = (
    await api('POST', '/api/v1/views', {
      name: 'Open tasks',
      collection: 'tasks',
      shared: true,
      filter: { status: { _eq: 'open' } },
      sortBy: 'title',
      fields: ['title'],
    })
  ).data.id
  const top = (
    await api('POST', '/api/v1/navigation', { label: 'Tasks', target: { kind: 'collection', ref: 'tasks' } })
  ).data.id
  await api('POST', '/api/v1/navigation', { label: 'Open tasks', target: { kind: 'view', ref: viewId }, parentId: top })
  await api('POST', '/api/v1/navigation', {
    label: 'Team handbook',
    target: { kind: 'url', ref: 'https://handbook.example.com/' },
    parentId: top,
  })
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

describe.skipIf(browserMissing)('admin UI: the shared menu and saved views', () => {
  it('the menu opens a saved view as the grid with its filter, sort and columns; tabs switch views', async () => {
    browser = await launchBrowser(server)
    const { page, problems } = await browser.open('/_/')
    await signInThroughUi(page, owner.email, owner.password)
    const menu = page.getByRole('navigation', { name: 'Main' })
    await menu.getByRole('heading', { name: 'Menu' }).waitFor()
    const handbook = menu.getByRole('link', { name: 'Team handbook' })
    expect(await handbook.getAttribute('href')).toBe('https://handbook.example.com/')
    expect(await handbook.getAttribute('target')).toBe('_blank')
    expect(await handbook.getAttribute('rel')).toContain('noopener')
    await expectAccessible(page, 'shell with the shared menu')

    await menu.getByRole('link', { name: 'Open tasks' }).click()
    await page.getByRole('grid').waitFor()
    await expect.poll(() => page.locator('.records-count').textContent()).toContain('3 records')
    const url = new URL(page.url())
    expect(url.searchParams.get('view')).toBe(viewId)
    expect(url.searchParams.get('sort')).toBe('title')
    expect(JSON.parse(url.searchParams.get('filter')!)).toEqual({ status: { _eq: 'open' } })
    // Only the view's columns: the status column is hidden.
    expect(await page.locator('[role=columnheader]', { hasText: 'status' }).count()).toBe(0)
    const titles = await page.locator('[role=row][data-id] [data-column="title"]').allTextContents()
    expect(titles).toEqual(['Alpha', 'Bravo', 'Charlie'])
    const tabs = page.getByRole('navigation', { name: 'Saved views' })
    expect(await tabs.getByRole('link', { name: 'Open tasks' }).getAttribute('aria-current')).toBe('page')
    await expectAccessible(page, 'grid through a saved view')

    await tabs.getByRole('link', { name: 'All records' }).click()
    await expect.poll(() => page.locator('.records-count').textContent()).toContain('4 records')
    expect(await tabs.getByRole('link', { name: 'All records' }).getAttribute('aria-current')).toBe('page')
    await tabs.getByRole('link', { name: 'Open tasks' }).click()
    await expect.poll(() => page.locator('.records-count').textContent()).toContain('3 records')
    expect((await problems()).filter((p) => !p.includes('status of 401'))).toEqual([])
  })
})
