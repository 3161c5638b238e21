import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import {
  dimensions,
  download,
  downloadVia,
  FILES,
  form,
  image,
  metadata,
  patchSettings,
  pollFile,
  postForm,
  someBytes,
  uploadViaToken,
} from './files-support.js'

// Image variants (core-api § File endpoints): a thumbnail and the sizes of files.variants, made under the
// project's files.strategy; regenerate one file or page through many; client-made previews. Background
// work is awaited by polling the file's metadata.

let server: TestServer
let owner: Account
let admin: Account
let alice: Account // editor
let bob: Account // editor
let jpeg: Buffer
let png: Buffer

const ready = (file: Record<string, any>) => file.variantStatus === 'ready' || file.variantStatus === 'failed'

async function imageFile(
  token: string,
  bytes: Buffer,
  mime: 'image/jpeg' | 'image/png',
  extra: { visibility?: 'private'; collection_name?: string } = {},
): Promise<string> {
  return uploadViaToken(server, token, bytes, {
    filename: mime === 'image/png' ? 'pic.png' : 'pic.jpg',
    mime,
    ...extra,
  })
}

async function strategy(value: 'store_on_upload' | 'store_on_request' | 'edge_cache_only'): Promise<void> {
  await patchSettings(server, owner.token, { 'files.strategy': value })
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
  alice = await createAccount(server, owner.token, { role: 'editor' })
  bob = await createAccount(server, owner.token, { role: 'editor' })
  jpeg = await image('jpeg', 800, 600)
  png = await image('png', 300, 400)
  for (const name of ['gallery', 'empty_box']) {
    const made = await server.request('POST', '/api/v1/collections', {
      token: owner.token,
      body: { name, fields: [{ name: 'title', type: 'text', required: false }] },
    })
    expect(made.status, made.text).toBe(201)
  }
})
afterAll(async () => {
  await server?.stop()
})

describe('store_on_upload (the default)', () => {
  it("makes the thumbnail and the configured sizes after confirm, in the original's format", async () => {
    const id = await imageFile(alice.token, jpeg, 'image/jpeg')
    const file = await pollFile(server, alice.token, id, ready)
    expect(file.variantStatus).toBe('ready')
    expect(Object.keys(file.variants).sort()).toEqual(['medium', 'small', 'thumbnail'])
    expect(file.variants.thumbnail).toMatchObject({ width: 200, height: 150, mimeType: 'image/jpeg', source: 'server' })
    expect(file.variants.small).toMatchObject({ width: 480, height: 360 })
    // Never enlarged: 1024 is wider than the original.
    expect(file.variants.medium).toMatchObject({ width: 800, height: 600 })

    const thumb = await downloadVia(server, bob.token, id, 'thumbnail')
    expect(thumb.variant).toBe('thumbnail')
    expect(await dimensions(thumb.bytes)).toEqual({ width: 200, height: 150, format: 'jpeg' })
    expect(thumb.bytes.length).toBe(file.variants.thumbnail.sizeBytes)
    // Unknown sizes and "original" answer the original.
    for (const size of ['huge', 'original']) {
      const got = await downloadVia(server, bob.token, id, size)
      expect(got.variant).toBeNull()
      expect(got.bytes.equals(jpeg)).toBe(true)
    }
  })

  it('PNG stays PNG; a file that is not an image gets none and its sizes fall back to the original', async () => {
    const id = await imageFile(alice.token, png, 'image/png')
    const file = await pollFile(server, alice.token, id, ready)
    expect(file.variants.thumbnail).toMatchObject({ width: 150, height: 200, mimeType: 'image/png' })
    expect((await dimensions((await downloadVia(server, alice.token, id, 'small')).bytes)).format).toBe('png')

    const pdf = await uploadViaToken(server, alice.token, someBytes(500), {
      filename: 'doc.pdf',
      mime: 'application/pdf',
    })
    expect(await metadata(server, alice.token, pdf)).toMatchObject({ variantStatus: 'none', variants: {} })
    expect((await downloadVia(server, alice.token, pdf, 'thumbnail')).variant).toBeNull()
  })

  it('a "JPEG" that does not decode ends as failed, and its thumbnail falls back to the original', async () => {
    const junk = someBytes(2000)
    const id = await uploadViaToken(server, alice.token, junk, { filename: 'broken.jpg', mime: 'image/jpeg' })
    const file = await pollFile(server, alice.token, id, ready)
    expect(file).toMatchObject({ variantStatus: 'failed', variants: {} })
    const got = await downloadVia(server, alice.token, id, 'thumbnail')
    expect(got.variant).toBeNull()
    expect(got.bytes.equals(junk)).toBe(true)
  })
})

describe('the other strategies', () => {
  afterAll(async () => {
    await strategy('store_on_upload')
  })

  it('store_on_request: nothing is made at upload; the first download of a size makes and keeps that size alone', async () => {
    await strategy('store_on_request')
    const id = await imageFile(alice.token, jpeg, 'image/jpeg')
    expect(await metadata(server, alice.token, id)).toMatchObject({ variantStatus: 'none', variants: {} })
    const small = await downloadVia(server, bob.token, id, 'small')
    expect(small.variant).toBe('small')
    expect(await dimensions(small.bytes)).toMatchObject({ width: 480, height: 360 })
    const after = await metadata(server, alice.token, id)
    expect(Object.keys(after.variants)).toEqual(['small'])
    // The second request serves the stored one.
    const again = await server.request('GET', `${FILES}/download-token/${id}?size=small`, { token: bob.token })
    expect(again.body.variant).toBe('small')
    expect((await metadata(server, alice.token, id)).variants.small.r2Key).toBe(after.variants.small.r2Key)
    // An unknown size is not made: the original.
    expect((await downloadVia(server, bob.token, id, 'poster')).variant).toBeNull()
  })

  it('edge_cache_only: no variant is ever stored; sizes answer the original and regenerate skips', async () => {
    await strategy('edge_cache_only')
    const id = await imageFile(alice.token, jpeg, 'image/jpeg')
    const got = await downloadVia(server, alice.token, id, 'thumbnail')
    expect(got.variant).toBeNull()
    expect(got.bytes.equals(jpeg)).toBe(true)
    const regenerated = await server.request('POST', `${FILES}/${id}/regenerate`, { token: alice.token })
    expect(regenerated.status, regenerated.text).toBe(200)
    expect(regenerated.body.data).toMatchObject({
      id,
      status: 'skipped',
      reason: expect.stringContaining('edge_cache_only'),
    })
    expect(await metadata(server, alice.token, id)).toMatchObject({ variantStatus: 'none', variants: {} })
  })
})

describe('POST /api/v1/files/:id/regenerate', () => {
  it('follows files.variants: new sizes are made, sizes no longer named are removed with their objects', async () => {
    const id = await imageFile(alice.token, jpeg, 'image/jpeg')
    const before = await pollFile(server, alice.token, id, ready)
    const smallUrl = (await server.request('GET', `${FILES}/download-token/${id}?size=small`, { token: alice.token }))
      .body.downloadUrl
    await patchSettings(server, owner.token, { 'files.variants': 'tiny:64' })
    try {
      const reply = await server.request('POST', `${FILES}/${id}/regenerate`, { token: alice.token })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.data).toMatchObject({ id, filename: 'pic.jpg', status: 'regenerated', reason: null })
      expect(Object.keys(reply.body.data.file.variants).sort()).toEqual(['thumbnail', 'tiny'])
      expect(reply.body.data.file.variants.tiny).toMatchObject({ width: 64, height: 48 })
      expect(reply.body.data.file.variants.thumbnail.r2Key).toBe(before.variants.thumbnail.r2Key)
      expect((await download(smallUrl)).status).toBe(404)
    } finally {
      await patchSettings(server, owner.token, { 'files.variants': 'small:480,medium:1024' })
    }
  })

  it('is refused outside the update scope (403), for hidden files (404), and for a file never confirmed (400)', async () => {
    const open = await imageFile(alice.token, png, 'image/png')
    const secret = await imageFile(alice.token, png, 'image/png', { visibility: 'private' })
    expect((await server.request('POST', `${FILES}/${open}/regenerate`, { token: bob.token })).status).toBe(403)
    expect((await server.request('POST', `${FILES}/${secret}/regenerate`, { token: bob.token })).status).toBe(404)
    expect(
      (await server.request('POST', `${FILES}/${secret}/regenerate`, { token: admin.token })).body.data.status,
    ).toBe('regenerated')
    const pending = await uploadViaToken(server, alice.token, png, { mime: 'image/png', confirm: false })
    expect((await server.request('POST', `${FILES}/${pending}/regenerate`, { token: alice.token })).status).toBe(400)
  })

  it('rejects settings that name bad sizes', async () => {
    for (const value of ['thumbnail:100', 'small', 'big:9000', 'a:20,a:30', 'UP:100']) {
      const reply = await server.request('PATCH', '/api/v1/settings', {
        token: owner.token,
        body: { 'files.variants': value },
      })
      expect(reply.status, value).toBe(400)
    }
    const reply = await server.request('GET', '/api/v1/settings', { token: owner.token })
    expect(reply.body.data['files.variants']).toBe('small:480,medium:1024')
  })
})

describe('POST /api/v1/files/regenerate', () => {
  let mine: string[]
  let theirs: string
  let pdf: string
  beforeAll(async () => {
    mine = []
    for (let i = 0; i < 3; i++)
      mine.push(await imageFile(alice.token, png, 'image/png', { collection_name: 'gallery' }))
    theirs = await imageFile(bob.token, png, 'image/png', { collection_name: 'gallery' })
    pdf = await uploadViaToken(server, alice.token, someBytes(100), {
      mime: 'application/pdf',
      collection_name: 'gallery',
    })
  })

  it('pages through a container with the tallies; files outside the update scope are counted, not touched', async () => {
    const pages: Record<string, any>[] = []
    let cursor: string | null = null
    do {
      const reply = await server.request('POST', `${FILES}/regenerate`, {
        token: alice.token,
        body: { cursor, limit: 2, containerId: 'gallery' },
      })
      expect(reply.status, reply.text).toBe(200)
      pages.push(reply.body)
      cursor = reply.body.nextCursor
    } while (cursor !== null)
    expect(pages).toHaveLength(3)
    expect(pages.map((p) => p.total)).toEqual([5, null, null])
    expect(pages.map((p) => p.hasMore)).toEqual([true, true, false])
    expect(pages.map((p) => p.limit)).toEqual([2, 2, 2])
    expect(pages[0]!.cursor).toBeNull()
    expect(pages[1]!.cursor).toBe(pages[0]!.nextCursor)
    const sum = (key: string) => pages.reduce((n, p) => n + p[key], 0)
    expect({
      processed: sum('processed'),
      regenerated: sum('regenerated'),
      skipped: sum('skipped'),
      failed: sum('failed'),
      outOfScope: sum('outOfScope'),
    }).toEqual({
      processed: 5,
      regenerated: 3,
      skipped: 1,
      failed: 0,
      outOfScope: 1,
    })
    const results = pages.flatMap((p) => p.results)
    expect(results.map((r) => r.id).sort()).toEqual([...mine, theirs, pdf].sort())
    expect(results.find((r) => r.id === theirs)).toEqual({
      id: theirs,
      filename: 'pic.png',
      status: 'out_of_scope',
      reason: expect.any(String),
    })
    expect(results.find((r) => r.id === pdf)).toMatchObject({ status: 'skipped', reason: 'not a JPEG or PNG image' })
    for (const id of mine) expect((await metadata(server, alice.token, id)).variants.thumbnail).toBeDefined()
  })

  it('an administrator has no out-of-scope files; the limit defaults to 10 and is capped at 50', async () => {
    const all = await server.request('POST', `${FILES}/regenerate`, {
      token: admin.token,
      body: { containerId: 'gallery', limit: 500 },
    })
    expect(all.status, all.text).toBe(200)
    expect(all.body).toMatchObject({
      limit: 50,
      total: 5,
      processed: 5,
      outOfScope: 0,
      regenerated: 4,
      hasMore: false,
      nextCursor: null,
    })
    const empty = await server.request('POST', `${FILES}/regenerate`, {
      token: admin.token,
      body: { containerId: 'empty_box' },
    })
    expect(empty.body).toMatchObject({ limit: 10, total: 0, processed: 0, results: [], hasMore: false })
    const noBody = await server.request('POST', `${FILES}/regenerate`, { token: admin.token })
    expect(noBody.status, noBody.text).toBe(200)
    expect(noBody.body.limit).toBe(10)
  })

  it('refuses a bad cursor or limit, and callers without update', async () => {
    expect(
      (await server.request('POST', `${FILES}/regenerate`, { token: alice.token, body: { cursor: 'nope' } })).status,
    ).toBe(400)
    expect(
      (await server.request('POST', `${FILES}/regenerate`, { token: alice.token, body: { limit: 0 } })).status,
    ).toBe(400)
    const viewer = await createAccount(server, owner.token, { role: 'viewer' })
    expect((await server.request('POST', `${FILES}/regenerate`, { token: viewer.token, body: {} })).status).toBe(403)
  })
})

describe('POST /api/v1/files/:id/variant (client-made previews)', () => {
  let id: string
  let preview: Buffer
  beforeAll(async () => {
    id = await uploadViaToken(server, alice.token, someBytes(3000), { filename: 'clip.mp4', mime: 'video/mp4' })
    preview = await image('png', 64, 36)
  })

  it('the uploader attaches a named preview; downloads of that size answer it', async () => {
    const reply = await postForm(
      server,
      `${FILES}/${id}/variant`,
      alice.token,
      form({ name: 'poster' }, { filename: 'poster.png', type: 'image/png', bytes: preview }),
    )
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.variants.poster).toMatchObject({
      width: 64,
      height: 36,
      mimeType: 'image/png',
      sizeBytes: preview.length,
      source: 'client',
    })
    const got = await downloadVia(server, bob.token, id, 'poster')
    expect(got.variant).toBe('poster')
    expect(got.bytes.equals(preview)).toBe(true)

    // A second one of that name replaces it and removes the first object.
    const oldUrl = (await server.request('GET', `${FILES}/download-token/${id}?size=poster`, { token: alice.token }))
      .body.downloadUrl
    const second = await image('jpeg', 32, 18)
    const again = await postForm(
      server,
      `${FILES}/${id}/variant`,
      alice.token,
      form({ name: 'poster' }, { filename: 'p.jpg', type: 'image/jpeg', bytes: second }),
    )
    expect(again.status, again.text).toBe(200)
    expect(again.body.data.variants.poster).toMatchObject({ width: 32, mimeType: 'image/jpeg' })
    expect((await download(oldUrl)).status).toBe(404)
  })

  it("is the uploader's alone: 403 for other editors and administrators, 404 when the file is hidden", async () => {
    const body = () => form({ name: 'poster' }, { filename: 'p.png', type: 'image/png', bytes: preview })
    for (const other of [bob, admin, owner]) {
      const reply = await postForm(server, `${FILES}/${id}/variant`, other.token, body())
      expect(reply.status, reply.text).toBe(403)
      expect(reply.body.error).toBe('forbidden')
    }
    const secret = await uploadViaToken(server, alice.token, someBytes(10), { visibility: 'private' })
    expect((await postForm(server, `${FILES}/${secret}/variant`, bob.token, body())).status).toBe(404)
    expect((await postForm(server, `${FILES}/${id}/variant`, undefined, body())).status).toBe(401)
  })

  it('refuses bad previews and names, and files never confirmed', async () => {
    const cases: [string, FormData][] = [
      [
        'not an image type',
        form({ name: 'poster' }, { filename: 'a.txt', type: 'text/plain', bytes: Buffer.from('hello') }),
      ],
      [
        'an image that does not decode',
        form({ name: 'poster' }, { filename: 'a.png', type: 'image/png', bytes: someBytes(100) }),
      ],
      ['no name', form({}, { filename: 'p.png', type: 'image/png', bytes: preview })],
      ['a reserved name', form({ name: 'original' }, { filename: 'p.png', type: 'image/png', bytes: preview })],
      ['a bad name', form({ name: 'Big Poster' }, { filename: 'p.png', type: 'image/png', bytes: preview })],
      ['no file', form({ name: 'poster' })],
      [
        'an unknown field',
        form({ name: 'poster', size: 'x' }, { filename: 'p.png', type: 'image/png', bytes: preview }),
      ],
    ]
    for (const [name, body] of cases) {
      const reply = await postForm(server, `${FILES}/${id}/variant`, alice.token, body)
      expect(reply.status, `${name}: ${reply.text}`).toBe(400)
      expect(reply.body.error, name).toBe('invalid_request')
    }
    const big = await postForm(
      server,
      `${FILES}/${id}/variant`,
      alice.token,
      form({ name: 'poster' }, { filename: 'p.png', type: 'image/png', bytes: someBytes(10 * 1024 * 1024 + 1) }),
    )
    expect(big.status).toBe(400)
    expect(big.body.error).toBe('limit_exceeded')
    const pending = await uploadViaToken(server, alice.token, someBytes(10), { confirm: false })
    expect(
      (
        await postForm(
          server,
          `${FILES}/${pending}/variant`,
          alice.token,
          form({ name: 'poster' }, { filename: 'p.png', type: 'image/png', bytes: preview }),
        )
      ).status,
    ).toBe(400)
    expect(Object.keys((await metadata(server, alice.token, id)).variants)).toEqual(['poster'])
  })
})
