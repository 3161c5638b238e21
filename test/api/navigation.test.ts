import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { accountWithGrants } from './collections-support.js'

/**
 * The navigation tree (issue 29 item 2, decision 064) over real HTTP: CRUD of items, the refusals of
 * system/navigation (401, 403, another project's item 404), targets and placements refused with 422 naming
 * the path, the reorder that applies whole or not at all, list paging, and the caller's tree leaving out
 * items whose target it may not read, with their children.
 */
const NAV = '/api/v1/navigation'
let server: TestServer
let owner: Account
/** The built-in editor: manages the menu, reads every collection and flows, no lenses. */
let editor: Account
/** system/navigation:read and collections/docs:read only. */
let reader: Account
/** Reads docs, no system/navigation grant. */
let outsider: Account
let lensId: string

const request = (
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> => server.request(method, path, { token, body, headers })

function refused(reply: Reply, status: number, code: string, at?: string): void {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.body).toMatchObject({ error: code, message: expect.any(String), details: expect.any(Object) })
  if (at !== undefined) expect(reply.body.details.at, reply.text).toBe(at)
}

async function item(
  label: string,
  target: { kind: string; ref: string },
  extra: Record<string, unknown> = {},
  token = editor.token,
): Promise<string> {
  const reply = await request('POST', NAV, token, { label, target, ...extra })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data.id as string
}

/** Every item of the project, as the editor lists it (all pages). */
async function allItems(): Promise<any[]> {
  const out: any[] = []
  for (let page = 1; ; page++) {
    const reply = await request('GET', `${NAV}?limit=100&page=${page}`, editor.token)
    expect(reply.status, reply.text).toBe(200)
    out.push(...reply.body.data)
    if (!reply.body.hasMore) return out
  }
}

/** Labels of a tree, nested as `label[child, child]`. */
const shape = (nodes: any[]): string[] =>
  nodes.map((n) => (n.children.length ? `${n.label}[${shape(n.children).join(', ')}]` : n.label))

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  for (const name of ['docs', 'secrets']) {
    const fields = [{ name: 'title', type: 'text', required: false }]
    const created = await request('POST', '/api/v1/collections', owner.token, { name, fields })
    expect(created.status, created.text).toBe(201)
  }
  const lens = await request('POST', '/api/v1/lenses', owner.token, { name: 'Docs lens', collection: 'docs' })
  expect(lens.status, lens.text).toBe(201)
  lensId = lens.body.data.id
  editor = await createAccount(server, owner.token, { role: 'editor' })
  reader = await accountWithGrants(server, owner.token, [
    { resource: 'system/navigation', action: 'read' },
    { resource: 'collections/docs', action: 'read' },
  ])
  outsider = await accountWithGrants(server, owner.token, [{ resource: 'collections/docs', action: 'read' }])
})
afterAll(async () => {
  await server?.stop()
})

describe('CRUD', () => {
  it('creates, reads, updates and deletes an item, placed after its last sibling', async () => {
    const parent = await item('Parent', { kind: 'url', ref: 'https://example.com/parent' }, { icon: 'folder' })
    const first = await request('POST', NAV, editor.token, {
      label: '  First  ',
      target: { kind: 'collection', ref: 'docs' },
      parentId: parent,
    })
    expect(first.status, first.text).toBe(201)
    expect(first.body.data).toMatchObject({
      label: 'First',
      icon: null,
      target: { kind: 'collection', ref: 'docs' },
      parentId: parent,
      sortOrder: 0,
      createdBy: editor.id,
    })
    const second = await item('Second', { kind: 'flow', ref: 'f1' }, { parentId: parent })
    expect((await request('GET', `${NAV}/${second}`, editor.token)).body.data.sortOrder).toBe(1)

    const patched = await request('PATCH', `${NAV}/${second}`, editor.token, {
      label: 'Renamed',
      icon: 'star',
      target: { kind: 'url', ref: 'http://example.org/x?y=1#z' },
      sortOrder: 7,
    })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body.data).toMatchObject({
      label: 'Renamed',
      icon: 'star',
      target: { kind: 'url', ref: 'http://example.org/x?y=1#z' },
      sortOrder: 7,
      parentId: parent,
    })
    expect((await request('GET', `${NAV}/${second}`, editor.token)).body.data.label).toBe('Renamed')

    // A parent with children is kept: the refusal counts them.
    const busy = await request('DELETE', `${NAV}/${parent}`, editor.token)
    refused(busy, 409, 'conflict')
    expect(busy.body.details.children).toBe(2)

    for (const id of [first.body.data.id, second, parent])
      expect((await request('DELETE', `${NAV}/${id}`, editor.token)).status).toBe(204)
    refused(await request('GET', `${NAV}/${parent}`, editor.token), 404, 'not_found')
    refused(await request('DELETE', `${NAV}/${parent}`, editor.token), 404, 'not_found')
  })

  it('lists a page at a time', async () => {
    const before = (await request('GET', NAV, editor.token)).body.total as number
    for (let i = 0; i < 5; i++) await item(`Paged ${i}`, { kind: 'url', ref: `https://example.com/${i}` })
    const page = await request('GET', `${NAV}?limit=2&page=2`, editor.token)
    expect(page.status, page.text).toBe(200)
    expect(page.body).toMatchObject({ total: before + 5, page: 2, limit: 2, hasMore: true })
    expect(page.body.data).toHaveLength(2)
    const last = Math.ceil((before + 5) / 2)
    const tail = await request('GET', `${NAV}?limit=2&page=${last}`, editor.token)
    expect(tail.body.hasMore).toBe(false)
    refused(await request('GET', `${NAV}?limit=101`, editor.token), 400, 'invalid_request')
  })
})

describe('refusals', () => {
  it('anonymous callers are asked to sign in, callers without the permission are forbidden', async () => {
    const id = await item('Guarded', { kind: 'url', ref: 'https://example.com/guarded' })
    for (const [method, path, body] of [
      ['GET', `${NAV}/tree`],
      ['GET', NAV],
      ['GET', `${NAV}/${id}`],
      ['POST', NAV, { label: 'x', target: { kind: 'url', ref: 'https://example.com' } }],
      ['PATCH', `${NAV}/${id}`, { label: 'x' }],
      ['DELETE', `${NAV}/${id}`],
      ['PUT', `${NAV}/order`, { items: [] }],
    ] as const) {
      refused(await request(method, path, undefined, body), 401, 'unauthorized')
      refused(await request(method, path, outsider.token, body), 403, 'forbidden')
    }
    // Reading is not editing.
    refused(
      await request('POST', NAV, reader.token, { label: 'x', target: { kind: 'url', ref: 'https://example.com' } }),
      403,
      'forbidden',
    )
    refused(await request('PATCH', `${NAV}/${id}`, reader.token, { label: 'x' }), 403, 'forbidden')
    refused(await request('DELETE', `${NAV}/${id}`, reader.token), 403, 'forbidden')
    refused(await request('PUT', `${NAV}/order`, reader.token, { items: [] }), 403, 'forbidden')
    expect((await request('GET', `${NAV}/${id}`, editor.token)).body.data.label).toBe('Guarded')
  })

  it("another project's item is not found, even to a super_admin acting here, and cannot be a parent", async () => {
    const project = await request('POST', '/api/v1/projects', owner.token, { name: 'elsewhere' })
    expect(project.status, project.text).toBe(201)
    const there = { 'x-project-id': project.body.data.id as string }
    const created = await request(
      'POST',
      NAV,
      owner.token,
      { label: 'Theirs', target: { kind: 'url', ref: 'https://example.com/theirs' } },
      there,
    )
    expect(created.status, created.text).toBe(201)
    const id = created.body.data.id as string
    for (const token of [owner.token, editor.token]) {
      refused(await request('GET', `${NAV}/${id}`, token), 404, 'not_found')
      refused(await request('PATCH', `${NAV}/${id}`, token, { label: 'mine now' }), 404, 'not_found')
      refused(await request('DELETE', `${NAV}/${id}`, token), 404, 'not_found')
      const tree = await request('GET', `${NAV}/tree`, token)
      expect(JSON.stringify(tree.body)).not.toContain('Theirs')
    }
    refused(
      await request('POST', NAV, editor.token, {
        label: 'Under theirs',
        target: { kind: 'url', ref: 'https://example.com' },
        parentId: id,
      }),
      422,
      'validation_error',
      'parentId',
    )
    const still = await request('GET', `${NAV}/${id}`, owner.token, undefined, there)
    expect(still.body.data.label).toBe('Theirs')
  })
})

describe('validation', () => {
  it('refuses an unknown target kind naming target.kind', async () => {
    for (const kind of ['page', 'URL', '__proto__', 'constructor'])
      refused(
        await request('POST', NAV, editor.token, { label: 'x', target: { kind, ref: 'docs' } }),
        422,
        'validation_error',
        'target.kind',
      )
  })

  it('takes http(s) URLs only, without credentials, naming target.ref', async () => {
    const bad = [
      'javascript:alert(1)',
      'JavaScript:alert(1)',
      ' javascript:alert(1)',
      'java\tscript:alert(1)',
      'java\nscript:alert(1)',
      'JAVASCRIPT:alert(document.cookie)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:msgbox(1)',
      'ftp://example.com/file',
      '//example.com/protocol-relative',
      '/relative/path',
      'https://user:secret@example.com/',
      'https://user@example.com/',
      'https://example.com/with space',
      '',
    ]
    for (const ref of bad)
      refused(
        await request('POST', NAV, editor.token, { label: 'x', target: { kind: 'url', ref } }),
        422,
        'validation_error',
        'target.ref',
      )
    const id = await item('Good URL', { kind: 'url', ref: 'https://example.com/a?b=c' })
    refused(
      await request('PATCH', `${NAV}/${id}`, editor.token, { target: { kind: 'url', ref: 'javascript:alert(1)' } }),
      422,
      'validation_error',
      'target.ref',
    )
    expect((await request('GET', `${NAV}/${id}`, editor.token)).body.data.target.ref).toBe('https://example.com/a?b=c')
  })

  it('refuses a cycle, an unknown parent and a sixth level, naming parentId', async () => {
    const levels: string[] = []
    for (let i = 1; i <= 5; i++)
      levels.push(
        await item(`Level ${i}`, { kind: 'url', ref: 'https://example.com/' }, { parentId: levels.at(-1) ?? null }),
      )
    const [l1, l2, , , l5] = levels as [string, string, string, string, string]
    const sixth = await request('POST', NAV, editor.token, {
      label: 'Level 6',
      target: { kind: 'url', ref: 'https://example.com/' },
      parentId: l5,
    })
    refused(sixth, 422, 'validation_error', 'parentId')
    expect(sixth.body.details.reason).toBe('too_deep')

    // Moving a two-level subtree under level 4 would put its child at level 6.
    const loose = await item('Loose', { kind: 'url', ref: 'https://example.com/' })
    await item('Loose child', { kind: 'url', ref: 'https://example.com/' }, { parentId: loose })
    const deep = await request('PATCH', `${NAV}/${loose}`, editor.token, { parentId: levels[3] })
    refused(deep, 422, 'validation_error', 'parentId')
    expect(deep.body.details.reason).toBe('too_deep')

    for (const parentId of [l1, l2, l5]) {
      const cycle = await request('PATCH', `${NAV}/${l1}`, editor.token, { parentId })
      refused(cycle, 422, 'validation_error', 'parentId')
      expect(cycle.body.details.reason).toBe('cycle')
    }
    refused(
      await request('PATCH', `${NAV}/${l1}`, editor.token, { parentId: 'no-such-item' }),
      422,
      'validation_error',
      'parentId',
    )
    expect((await request('GET', `${NAV}/${l1}`, editor.token)).body.data.parentId).toBeNull()
  })
})

describe('reorder', () => {
  it('places every item in one call', async () => {
    const a = await item('Reorder A', { kind: 'url', ref: 'https://example.com/a' })
    const b = await item('Reorder B', { kind: 'url', ref: 'https://example.com/b' })
    const items = (await allItems()).map((i) => ({ id: i.id, parentId: i.parentId, sortOrder: i.sortOrder }))
    const placed = items.map((i) =>
      i.id === a
        ? { ...i, parentId: b, sortOrder: 0 }
        : i.id === b
          ? { ...i, sortOrder: 0 }
          : { ...i, sortOrder: i.sortOrder + 1 },
    )
    const reply = await request('PUT', `${NAV}/order`, editor.token, { items: placed })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toHaveLength(items.length)
    const tree = await request('GET', `${NAV}/tree`, editor.token)
    expect(tree.body.data[0].label).toBe('Reorder B')
    expect(shape([tree.body.data[0]])).toEqual(['Reorder B[Reorder A]'])
  })

  it('changes nothing when the list is bad, naming the item at fault', async () => {
    const before = await allItems()
    const items = before.map((i) => ({ id: i.id, parentId: i.parentId, sortOrder: i.sortOrder + 100 }))
    const root = items.findIndex((i) => i.parentId === null && items.some((c) => c.parentId === i.id))
    const child = items.findIndex((i) => i.parentId === items[root]!.id)
    expect(root).toBeGreaterThanOrEqual(0)

    const cycle = items.map((i, n) => (n === root ? { ...i, parentId: items[child]!.id } : i))
    const cyclic = await request('PUT', `${NAV}/order`, editor.token, { items: cycle })
    refused(cyclic, 422, 'validation_error')
    expect(cyclic.body.details.at).toMatch(/^items\[\d+\]\.parentId$/)
    expect(cyclic.body.details.reason).toBe('cycle')

    refused(
      await request('PUT', `${NAV}/order`, editor.token, { items: items.slice(1) }),
      422,
      'validation_error',
      'items',
    )
    refused(
      await request('PUT', `${NAV}/order`, editor.token, { items: [...items.slice(0, -1), items[0]] }),
      422,
      'validation_error',
      `items[${items.length - 1}].id`,
    )
    refused(
      await request('PUT', `${NAV}/order`, editor.token, {
        items: items.map((i, n) => (n === 2 ? { ...i, id: 'not-an-item' } : i)),
      }),
      422,
      'validation_error',
      'items[2].id',
    )
    refused(
      await request('PUT', `${NAV}/order`, editor.token, {
        items: items.map((i, n) => (n === 1 ? { ...i, parentId: 'not-an-item' } : i)),
      }),
      422,
      'validation_error',
      'items[1].parentId',
    )
    expect(await allItems()).toEqual(before)
  })
})

describe("the caller's tree", () => {
  it('leaves out items whose target the caller may not read, and their children', async () => {
    const project = await request('POST', '/api/v1/projects', owner.token, { name: 'menu' })
    expect(project.status, project.text).toBe(201)
    // A fresh project: the tree holds only what this test makes, so its whole shape can be compared.
    const here = { 'x-project-id': project.body.data.id as string }
    const make = async (label: string, target: { kind: string; ref: string }, parentId: string | null = null) => {
      const reply = await request('POST', NAV, owner.token, { label, target, parentId }, here)
      expect(reply.status, reply.text).toBe(201)
      return reply.body.data.id as string
    }
    for (const name of ['docs', 'secrets']) {
      const fields = [{ name: 'title', type: 'text', required: false }]
      expect((await request('POST', '/api/v1/collections', owner.token, { name, fields }, here)).status).toBe(201)
    }
    const lens = await request('POST', '/api/v1/lenses', owner.token, { name: 'L', collection: 'docs' }, here)
    expect(lens.status, lens.text).toBe(201)
    await make('Docs', { kind: 'collection', ref: 'docs' })
    const secrets = await make('Secrets', { kind: 'collection', ref: 'secrets' })
    await make('Under secrets', { kind: 'url', ref: 'https://example.com/under' }, secrets)
    const help = await make('Help', { kind: 'url', ref: 'https://example.com/help' })
    await make('Help secrets', { kind: 'collection', ref: 'secrets' }, help)
    await make('Help docs', { kind: 'collection', ref: 'docs' }, help)
    await make('Flow', { kind: 'flow', ref: 'some-flow' })
    await make('Lens', { kind: 'lens', ref: lens.body.data.id })
    await make('Missing lens', { kind: 'lens', ref: lensId })
    const view = async (name: string, collection: string, shared: boolean) => {
      const reply = await request('POST', '/api/v1/views', owner.token, { name, collection, shared }, here)
      expect(reply.status, reply.text).toBe(201)
      return reply.body.data.id as string
    }
    await make('View', { kind: 'view', ref: await view('Open docs', 'docs', true) })
    await make('Secret view', { kind: 'view', ref: await view('Open secrets', 'secrets', true) })
    await make('Personal view', { kind: 'view', ref: await view('Mine', 'docs', false) })
    await make('Missing view', { kind: 'view', ref: 'some-view' })
    await make('Gone collection', { kind: 'collection', ref: 'nowhere' })

    const asOwner = await request('GET', `${NAV}/tree`, owner.token, undefined, here)
    expect(asOwner.status, asOwner.text).toBe(200)
    // A lens of another project (lensId), a view and a collection that do not exist show to nobody.
    expect(shape(asOwner.body.data)).toEqual([
      'Docs',
      'Secrets[Under secrets]',
      'Help[Help secrets, Help docs]',
      'Flow',
      'Lens',
      'View',
      'Secret view',
      'Personal view',
    ])

    const projectId = project.body.data.id as string
    const role = await request('POST', '/api/v1/roles', owner.token, { name: 'menu-reader' }, here)
    expect(role.status, role.text).toBe(201)
    const grants = await request(
      'PUT',
      `/api/v1/roles/${role.body.data.id}/grants`,
      owner.token,
      {
        grants: [
          { resource: 'system/navigation', action: 'read' },
          { resource: 'collections/docs', action: 'read' },
          { resource: 'system/views', action: 'read' },
        ],
      },
      here,
    )
    expect(grants.status, grants.text).toBe(200)
    const user = await request(
      'POST',
      '/api/v1/users',
      owner.token,
      { email: 'menu-reader@example.com', password: 'a good password', name: 'm', role: 'menu-reader' },
      here,
    )
    expect(user.status, user.text).toBe(201)
    const signIn = await request(
      'POST',
      '/api/auth/sign-in/email',
      undefined,
      {
        email: 'menu-reader@example.com',
        password: 'a good password',
      },
      { 'x-project-id': projectId },
    )
    expect(signIn.status, signIn.text).toBe(200)
    const token = signIn.body.token as string

    const asReader = await request('GET', `${NAV}/tree`, token)
    expect(asReader.status, asReader.text).toBe(200)
    // A shared view over docs shows; one over secrets (not readable) and the owner's personal one do not.
    expect(shape(asReader.body.data)).toEqual(['Docs', 'Help[Help docs]', 'View'])
    // The flat list and one item say no more than the tree.
    const list = await request('GET', NAV, token)
    expect(list.body.data.map((i: any) => i.label).sort()).toEqual(['Docs', 'Help', 'Help docs', 'View'])
    expect(list.body.total).toBe(4)
    refused(await request('GET', `${NAV}/${secrets}`, token), 404, 'not_found')
    expect(JSON.stringify(asReader.body) + JSON.stringify(list.body)).not.toContain('secrets')
  })

  it("the built-in viewer reads the tree; the editor's sees what its grants open", async () => {
    const viewer = await createAccount(server, owner.token, { role: 'viewer' })
    const id = await item('Docs for all', { kind: 'collection', ref: 'docs' })
    await item('Lens for some', { kind: 'lens', ref: lensId }, { parentId: id })
    const asViewer = await request('GET', `${NAV}/tree`, viewer.token)
    expect(asViewer.status, asViewer.text).toBe(200)
    expect(shape(asViewer.body.data)).toContain('Docs for all')
    // Editors hold no system/lenses grant: the lens child is left out of their tree, but listed for editing.
    const asEditor = await request('GET', `${NAV}/tree`, editor.token)
    expect(shape(asEditor.body.data)).toContain('Docs for all')
    const asOwner = await request('GET', `${NAV}/tree`, owner.token)
    expect(shape(asOwner.body.data)).toContain('Docs for all[Lens for some]')
    expect((await allItems()).map((i) => i.label)).toContain('Lens for some')
  })
})

describe('bounds', () => {
  it('a project holds at most 500 items: the 501st is a conflict counting them', async () => {
    const project = await request('POST', '/api/v1/projects', owner.token, { name: 'full menu' })
    expect(project.status, project.text).toBe(201)
    const projectId = project.body.data.id as string
    const here = { 'x-project-id': projectId }
    const body = { label: 'One more', target: { kind: 'url', ref: 'https://example.com' } }
    expect((await request('POST', NAV, owner.token, body, here)).status).toBe(201)
    // Filling the rest through the module's own store keeps the test quick; the refusal is checked over HTTP.
    await server.app.services.navigation.store.write(projectId, async (w) => {
      for (let i = 1; i < 500; i++)
        await w.insert({
          id: `filler-${i}`,
          project_id: projectId,
          label: `Filler ${i}`,
          icon: null,
          target_kind: 'url',
          target_ref: 'https://example.com',
          parent_id: null,
          sort_order: i,
          created_by: null,
          created_at: 0,
          updated_at: 0,
        })
    })
    const full = await request('POST', NAV, owner.token, body, here)
    refused(full, 409, 'conflict')
    expect(full.body.details).toMatchObject({ items: 500, max: 500 })
  })
})
