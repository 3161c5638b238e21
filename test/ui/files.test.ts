import { randomBytes } from 'node:crypto'
import sharp from 'sharp'
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
import { createAccount, signUpOwner, type Account } from '../support/identity.js'

// The Files screen in headless Chromium on a fresh server: an image uploaded through the UI by the SDK's
// presigned flow (XHR to the upload URL, the progress bar reaching 100%), its thumbnail shown once the
// server made it, the detail dialog with every size, a private upload (checked through the API: another
// user cannot see it), delete with confirmation; accessible (axe) light, dark and at 320 px.

let server: TestServer
let browser: Browser
let owner: Account
let viewer: Account
let ui: UiPage

/** A noisy PNG (it does not compress, so the upload is a few MB and reports progress on the way). */
async function png(width: number, height: number): Promise<Buffer> {
  return sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer()
}

const api = async (method: string, path: string, token = owner.token) => server.request(method, path, { token })

async function fileNamed(name: string): Promise<any> {
  const list = await api('GET', '/api/v1/files?limit=100')
  expect(list.status, list.text).toBe(200)
  return (list.body.data as any[]).find((f) => f.filename === name)
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
  const albums = await server.request('POST', '/api/v1/collections', {
    token: owner.token,
    body: { name: 'albums', fields: [{ name: 'cover', type: 'file', required: false }] },
  })
  expect(albums.status, albums.text).toBe(201)
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

describe.skipIf(browserMissing)('admin UI: files', () => {
  it('uploads an image through the UI with a progress bar reaching 100%, then shows its thumbnail', async () => {
    browser = await launchBrowser(server)
    ui = await browser.open('/_/')
    const { page } = ui
    await signInThroughUi(page, owner.email, owner.password)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Files' }).click()
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor()
    await page.getByText('No files yet').waitFor()
    await expectAccessible(page, 'files, empty')

    // Every value the progress bar takes, recorded as the page changes it.
    await page.evaluate(`
      window.__progress = []
      new MutationObserver(() => {
        const bar = document.querySelector('progress')
        if (bar && window.__progress.at(-1) !== bar.value) window.__progress.push(bar.value)
      }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['value'] })
    `)
    // Uploads slowed to 1 MB/s (Chromium's network emulation), so the bar moves through values on the way.
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('Network.enable')
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 1024 * 1024,
    })
    const image = await png(1200, 900)
    await page
      .getByLabel('File', { exact: true })
      .setInputFiles({ name: 'photo.png', mimeType: 'image/png', buffer: image })
    await page.getByLabel('Visibility').selectOption('public')
    await page.getByRole('button', { name: 'Upload', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Uploaded photo.png.' }).waitFor()
    expect(await page.getByRole('progressbar', { name: 'Upload progress' }).getAttribute('value')).toBe('100')
    await page.getByText('100%', { exact: true }).waitFor()
    const seen = (await page.evaluate('window.__progress')) as number[]
    expect(seen.at(-1)).toBe(100)
    expect(seen).toEqual([...seen].sort((a, b) => a - b))
    expect(seen.filter((v) => v > 0 && v < 100).length, JSON.stringify(seen)).toBeGreaterThan(1)
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    })
    await cdp.detach()

    // Stored as sent, complete, public; the server makes its sizes.
    const stored = await fileNamed('photo.png')
    expect(stored).toMatchObject({ mimeType: 'image/png', sizeBytes: image.byteLength, visibility: 'public' })
    expect(stored.status).toBe('complete')

    // The row's preview is the server's thumbnail, loaded by the browser (the page's policy allows it).
    const thumb = page.getByRole('img', { name: 'Preview of photo.png' })
    await thumb.waitFor({ timeout: 30_000 })
    await expect
      .poll(() =>
        thumb.evaluate((img) => {
          const image = img as unknown as { complete: boolean; naturalWidth: number }
          return image.complete && image.naturalWidth
        }),
      )
      .toBe(200)
    expect(await thumb.getAttribute('src')).toContain('/api/v1/storage/object')
    const row = page.getByRole('row').filter({ hasText: 'photo.png' })
    for (const text of ['image/png', 'public']) await row.getByText(text, { exact: true }).waitFor()
    await expectAccessible(page, 'files, one image')
  })

  it('the detail dialog lists the sizes the server made, with a preview and download links', async () => {
    const { page } = ui
    await page.getByRole('button', { name: 'Details of photo.png' }).click()
    const dialog = page.getByRole('dialog', { name: 'File details' })
    await dialog.waitFor()
    const stored = await fileNamed('photo.png')
    expect(stored.variantStatus).toBe('ready')
    for (const name of ['original', 'thumbnail', 'small', 'medium']) {
      await dialog
        .getByRole('row')
        .filter({ has: page.getByRole('cell', { name, exact: true }) })
        .waitFor()
      await dialog.getByRole('link', { name: `Download ${name}` }).waitFor()
    }
    await dialog.getByRole('row').filter({ hasText: '1024×768' }).waitFor()
    await dialog.getByText(stored.id, { exact: true }).waitFor()
    const preview = dialog.getByRole('img', { name: 'Preview of photo.png' })
    await expect
      .poll(() =>
        preview.evaluate((img) => {
          const image = img as unknown as { complete: boolean; naturalWidth: number }
          return image.complete && image.naturalWidth
        }),
      )
      .toBe(1024)
    await expectAccessible(page, 'file details')
    // The sizes can be made again (after a change to files.variants, or a failed attempt).
    await dialog.getByRole('button', { name: 'Make the sizes again' }).click()
    await dialog.getByRole('status').filter({ hasText: 'The sizes were made again.' }).waitFor()
    await dialog.getByRole('link', { name: 'Download medium' }).waitFor()
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
  })

  it('a private upload is private: the API says so and another user cannot see it', async () => {
    const { page } = ui
    await page
      .getByLabel('File', { exact: true })
      .setInputFiles({ name: 'private.png', mimeType: 'image/png', buffer: await png(64, 48) })
    await page.getByLabel('Visibility').selectOption('private')
    await page.getByLabel('Attach to').selectOption('albums')
    await page.getByRole('button', { name: 'Upload', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Uploaded private.png.' }).waitFor()
    await page.getByRole('row').filter({ hasText: 'private.png' }).getByText('private', { exact: true }).waitFor()
    const stored = await fileNamed('private.png')
    expect(stored.visibility).toBe('private')
    expect(stored.collectionName).toBe('albums')
    expect(stored.uploadedBy).toBe(owner.id)
    expect((await api('GET', `/api/v1/files/${stored.id}`, viewer.token)).status).toBe(404)
    // The list filtered by collection.
    await page.getByLabel('Attached to').selectOption('albums')
    await page.getByRole('heading', { name: 'Files attached to albums' }).waitFor()
    await page.getByRole('row').filter({ hasText: 'photo.png' }).waitFor({ state: 'detached' })
    await page.getByRole('row').filter({ hasText: 'private.png' }).waitFor()
    await page.getByLabel('Attached to').selectOption('')
    await page.getByRole('row').filter({ hasText: 'photo.png' }).waitFor()
    // The public one the viewer sees.
    const photo = await fileNamed('photo.png')
    expect((await api('GET', `/api/v1/files/${photo.id}`, viewer.token)).status).toBe(200)
  })

  it('an upload can be cancelled on the way: nothing is listed', async () => {
    const { page } = ui
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('Network.enable')
    const throttle = (uploadThroughput: number) =>
      cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput,
      })
    await throttle(256 * 1024)
    await page
      .getByLabel('File', { exact: true })
      .setInputFiles({ name: 'slow.png', mimeType: 'image/png', buffer: await png(1000, 1000) })
    await page.getByRole('button', { name: 'Upload', exact: true }).click()
    const bar = page.getByRole('progressbar', { name: 'Upload progress' })
    await expect.poll(async () => Number(await bar.getAttribute('value'))).toBeGreaterThan(0)
    await page.getByRole('button', { name: 'Cancel upload' }).click()
    await page.getByRole('status').filter({ hasText: 'Upload cancelled.' }).waitFor()
    await throttle(-1)
    await cdp.detach()
    expect(await bar.count()).toBe(0)
    expect(await fileNamed('slow.png')).toBeUndefined()
    expect(await page.getByRole('row').filter({ hasText: 'slow.png' }).count()).toBe(0)
  })

  it('delete asks first; cancel keeps the file, confirm removes it', async () => {
    const { page } = ui
    const stored = await fileNamed('private.png')
    await page.getByRole('img', { name: 'Preview of private.png' }).waitFor()
    await page.getByRole('button', { name: 'Delete private.png' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete this file?' })
    await dialog.waitFor()
    await expectAccessible(page, 'delete confirmation')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'detached' })
    expect((await api('GET', `/api/v1/files/${stored.id}`)).status).toBe(200)
    await page.getByRole('button', { name: 'Delete private.png' }).click()
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click()
    await dialog.waitFor({ state: 'detached' })
    await page.getByRole('row').filter({ hasText: 'private.png' }).waitFor({ state: 'detached' })
    expect((await api('GET', `/api/v1/files/${stored.id}`)).status).toBe(404)
    expect((await ui.problems()).filter((p) => !p.includes('status of 401'))).toEqual([])
  })

  it('dark, at 320 px: accessible, nothing wider than the screen', async () => {
    const { page, problems } = await browser.open('/_/files', { colorScheme: 'dark', width: 320 })
    await page.getByRole('img', { name: 'Preview of photo.png' }).waitFor()
    await expectAccessible(page, 'files, dark, 320 px')
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(320)
    expect(await problems()).toEqual([])
  })
})
