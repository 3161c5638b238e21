import type { Page } from 'playwright-core'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browserMissing, expectAccessible, launchBrowser, signInThroughUi, type Browser } from '../support/browser.js'
import { startServer, type TestServer } from '../support/harness.js'

// The first hour of a new team, entirely in the admin UI, in headless Chromium on a fresh server (issue 32's
// end-to-end path, the UI twin of docs/guides/first-hour.md): the owner made on the first-run screen, a
// collection, records, a filter, a reader role whose row rule shows each person their own tasks (signing in
// as the reader shows only hers), an upload, a flow published and run with its trace. What each step stored
// is checked through the API.

let server: TestServer
let browser: Browser
let readerBrowser: Browser | undefined
let token: string
const owner = { name: 'Olive Owner', email: 'olive@example.com', password: 'correct horse battery' }
const reader = { name: 'Rita Reader', email: 'rita@example.com', password: 'rita reads tasks' }

beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await readerBrowser?.close()
  await browser?.close()
  await server?.stop()
})

const api = async (method: string, path: string, body?: unknown) => {
  const reply = await server.request(method, path, { token, ...(body === undefined ? {} : { body }) })
  expect(reply.status, `${method} ${path}: ${reply.text}`).toBeLessThan(300)
  return reply.body
}
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 15_000 })
const nav = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click()

describe.skipIf(browserMissing)('admin UI: the first hour, end to end', () => {
  it('owner, collection, records, filter, a reader who sees only her rows, an upload, a flow run with its trace', {
    timeout: 240_000,
  }, async () => {
    browser = await launchBrowser(server)
    const { page, problems } = await browser.open('/')
    page.setDefaultTimeout(15_000)

    // 1. The owner, on the first-run screen.
    await page.getByLabel('Your name').fill(owner.name)
    await page.getByLabel('Email').fill(owner.email)
    await page.getByLabel('Password').fill(owner.password)
    await page.getByRole('button', { name: 'Create the owner' }).click()
    await page.getByRole('navigation', { name: 'Main' }).waitFor()
    token = (await server.request('POST', '/api/auth/sign-in/email', { body: owner })).body.token

    // 2. A collection: tasks with a title, a status and an assignee (a relation to users).
    await nav(page, 'Collections')
    await page.getByRole('button', { name: 'New collection' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByLabel('Name', { exact: true }).fill('tasks')
    const field = async (name: string, type: string, more?: () => Promise<void>) => {
      await dialog.getByLabel('Field name').fill(name)
      await dialog.getByLabel('Type', { exact: true }).selectOption(type)
      await more?.()
      await dialog.getByRole('button', { name: 'Add field', exact: true }).click()
      await dialog.getByRole('button', { name: `Edit field ${name}` }).waitFor()
    }
    await field('title', 'text', () => dialog.getByLabel('Required').check())
    await field('status', 'enum', () => dialog.getByLabel('Values').fill('open\ndone'))
    await field('assignee', 'relation', async () => {
      await dialog.getByLabel('Target collection').selectOption('users')
    })
    await dialog.getByRole('button', { name: 'Create collection' }).click()
    await page.getByRole('heading', { name: 'Schema: tasks' }).waitFor()
    const collection = (await api('GET', '/api/v1/collections/tasks')).data
    expect(collection.fields.map((f: { name: string; type: string }) => `${f.name}:${f.type}`)).toEqual([
      'title:text',
      'status:enum',
      'assignee:relation',
    ])

    // 3. A reader role, Rita with it, and the row rule: assignee is the signed-in user.
    await nav(page, 'Roles')
    await page.getByRole('button', { name: 'New role' }).click()
    await page.getByLabel('Name').fill('reader')
    await page.getByLabel('Description').fill('Reads the tasks assigned to them')
    await page.getByRole('button', { name: 'Create the role' }).click()
    await page.getByRole('heading', { name: 'Role reader' }).waitFor()
    await page.getByRole('button', { name: 'Add a grant' }).click()
    const grant = page.getByRole('dialog')
    await grant.getByLabel('Resource').fill('collections/tasks')
    await grant.getByLabel('Action', { exact: true }).selectOption('read')
    await grant.getByRole('button', { name: 'Add a condition' }).click()
    await grant.getByLabel('Field', { exact: true }).fill('assignee')
    await grant.getByLabel('Value is').selectOption('variable')
    await grant.getByLabel('Value', { exact: true }).selectOption('$CURRENT_USER')
    await grant.getByRole('button', { name: 'Add the grant' }).click()
    await page.getByRole('status').filter({ hasText: 'The grant was added' }).waitFor()
    await nav(page, 'Users')
    await page.getByRole('button', { name: 'New user' }).click()
    const user = page.getByRole('dialog')
    await user.getByLabel('Email').fill(reader.email)
    await user.getByLabel('Name', { exact: true }).fill(reader.name)
    await user.getByLabel('Password').fill(reader.password)
    await user.getByLabel('Role').selectOption('reader')
    await user.getByRole('button', { name: 'Create the user' }).click()
    await page.getByRole('status').filter({ hasText: 'was created' }).waitFor()

    // 4. Records, made in the grid's New record form: two for Rita, one for the owner.
    await nav(page, 'Collections')
    await page.getByRole('link', { name: 'tasks', exact: true }).click()
    await page.getByRole('grid').waitFor()
    for (const [title, status, assignee] of [
      ['Write the guide', 'open', reader.name],
      ['Ship it', 'done', reader.name],
      ['Book the venue', 'open', owner.name],
    ] as const) {
      await page.getByRole('button', { name: 'New record' }).click()
      const form = page.getByRole('dialog', { name: 'New record in tasks' })
      await form.getByLabel('title (required)').fill(title)
      await form.getByLabel('status').selectOption(status)
      await form.getByLabel('assignee').selectOption({ label: assignee })
      await form.getByRole('button', { name: 'Create the record' }).click()
      await form.waitFor({ state: 'detached' })
    }
    await poll(() => page.locator('.records-count').textContent()).toContain('3 records')
    const stored = (await api('GET', '/api/v1/collections/tasks/records')).data as {
      title: string
      status: string
      assignee: string
    }[]
    expect(stored.map((r) => `${r.title}/${r.status}`).sort()).toEqual([
      'Book the venue/open',
      'Ship it/done',
      'Write the guide/open',
    ])
    await expectAccessible(page, 'records grid')

    // 5. A filter: the open tasks.
    await page.locator('.records-filter summary').click()
    await page.getByRole('button', { name: 'Add a condition' }).click()
    await page.getByLabel('Field of condition 1').selectOption('status')
    await page.getByLabel('Operator of condition 1').selectOption('_eq')
    await page.getByLabel('Value of condition 1').selectOption('open')
    await page.getByRole('button', { name: 'Apply the filter' }).click()
    await poll(() => page.locator('.records-count').textContent()).toContain('2 records')
    expect(JSON.parse(new URL(page.url()).searchParams.get('filter')!)).toEqual({ status: { _eq: 'open' } })

    // 6. Rita signs in (her own browser) and sees only her two tasks.
    readerBrowser = await launchBrowser(server)
    const rita = await readerBrowser.open('/_/collections/tasks')
    rita.page.setDefaultTimeout(15_000)
    await signInThroughUi(rita.page, reader.email, reader.password)
    await rita.page.getByRole('grid').waitFor()
    await poll(() => rita.page.locator('.records-count').textContent()).toContain('2 records')
    const titles = await rita.page.locator('[role=row][data-id] [data-column="title"]').allTextContents()
    expect(titles.sort()).toEqual(['Ship it', 'Write the guide'])

    // 7. An upload, with its progress bar reaching 100%.
    await nav(page, 'Files')
    const png = await sharp({ create: { width: 320, height: 200, channels: 3, background: '#2450c8' } })
      .png()
      .toBuffer()
    await page
      .getByLabel('File', { exact: true })
      .setInputFiles({ name: 'plan.png', mimeType: 'image/png', buffer: png })
    await page.getByRole('button', { name: 'Upload', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Uploaded plan.png.' }).waitFor()
    expect(await page.getByRole('progressbar', { name: 'Upload progress' }).getAttribute('value')).toBe('100')
    const files = (await api('GET', '/api/v1/files')).data as { filename: string; status?: string }[]
    expect(files.map((f) => f.filename)).toContain('plan.png')

    // 8. A flow: manual trigger, one step from its generated form, published, activated, run; its trace.
    await nav(page, 'Flows')
    await page.getByRole('button', { name: 'New flow' }).click()
    await page.getByLabel('Name').fill('Say hello')
    await page.getByLabel('Trigger', { exact: true }).selectOption('manual')
    await page.getByRole('button', { name: 'Create the flow' }).click()
    await page.getByRole('heading', { name: 'Flow: Say hello' }).waitFor()
    const flowId = page.url().split('/').pop()!
    await page.getByLabel('Operation', { exact: true }).selectOption('log')
    await page.getByRole('button', { name: 'Add step' }).click()
    const step = page.getByRole('region', { name: /^1\. / })
    await step.getByLabel('Step key').fill('hello')
    await step.getByLabel('message (required)').fill('hello from the first hour')
    await page.getByRole('button', { name: 'Save draft' }).click()
    await page.getByText('Draft saved.').waitFor()
    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    await page.getByText('Published version 1.').waitFor()
    await page.getByRole('button', { name: 'Activate' }).click()
    await page.getByText('The flow is active: its triggers').waitFor()
    await page.getByRole('region', { name: 'Run now' }).getByRole('button', { name: 'Run now' }).click()
    await page.getByRole('heading', { name: 'Runs: Say hello' }).waitFor()
    const detail = page.locator('.flow-run-detail')
    await poll(() => detail.locator('.flow-facts .badge').first().textContent()).toBe('completed')
    expect(await detail.getByLabel('Output of hello').textContent()).toContain('hello from the first hour')
    const runs = (await api('GET', `/api/v1/automate/flows/${flowId}/runs`)).data as { status: string }[]
    expect(runs.map((r) => r.status)).toEqual(['completed'])
    await expectAccessible(page, 'flow run trace')

    // Nothing failed on the way but the signed-out probes.
    expect((await problems()).filter((p) => !p.includes('status of 401'))).toEqual([])
    expect((await rita.problems()).filter((p) => !/status of 40[13]/.test(p))).toEqual([])
  })
})
