import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { accountWithGrants } from './collections-support.js'
import { createCollection, freshName, recordsPath } from './records-fixtures.js'

/**
 * Renderers (issue 29 item 3, decision 065) over real HTTP: CRUD under system/renderers, the template
 * checked when saved (422 naming `template`), one record rendered as the caller (row rules: another's
 * record is 404; a field the caller's allowlist hides renders empty, also as a section; every value
 * HTML-escaped), the work bound, another project's ids, and removal with the collection.
 */
const RENDERERS = '/api/v1/renderers'
let server: TestServer
let owner: Account
/** system/renderers manage; reads every post. */
let manager: Account
/** system/renderers read; reads open posts only, and not their `secret`. */
let narrow: Account
/** Reads posts; no system/renderers grant. */
let outsider: Account
/** The built-in viewer role. */
let viewer: Account
let posts: string
let openId: string
let closedId: string

const request = (
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> => server.request(method, path, { token, body, headers })

function refused(reply: Reply, status: number, code: string): void {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.body).toMatchObject({ error: code, message: expect.any(String) })
}

async function createRenderer(body: Record<string, unknown>, token = manager.token): Promise<any> {
  const reply = await request('POST', RENDERERS, token, { collection: posts, kind: 'card', ...body })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data
}

const render = (id: string, token: string | undefined, recordId: string) =>
  request('POST', `${RENDERERS}/${id}/render`, token, { recordId })

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  posts = await createCollection(server, owner.token, freshName('posts'), [
    { name: 'title', type: 'text', required: true },
    { name: 'status', type: 'text', required: false },
    { name: 'secret', type: 'text', required: false },
    { name: 'tags', type: 'json', required: false },
  ])
  const open = await request('POST', recordsPath(posts), owner.token, {
    title: '<script>alert("x")</script>',
    status: 'open',
    secret: 'the-hidden-value',
    tags: ['a', '<b>', 'c'],
  })
  expect(open.status, open.text).toBe(201)
  openId = open.body.id ?? open.body.data?.id
  const closed = await request('POST', recordsPath(posts), owner.token, {
    title: 'Closed post',
    status: 'closed',
    secret: 'closed-secret',
  })
  expect(closed.status, closed.text).toBe(201)
  closedId = closed.body.id ?? closed.body.data?.id
  const read = { resource: `collections/${posts}`, action: 'read' }
  manager = await accountWithGrants(server, owner.token, [{ resource: 'system/renderers', action: 'manage' }, read])
  narrow = await accountWithGrants(server, owner.token, [
    { resource: 'system/renderers', action: 'read' },
    { ...read, fields: ['title', 'status', 'tags'], item_filter: { status: { _eq: 'open' } } },
  ] as never)
  outsider = await accountWithGrants(server, owner.token, [read])
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
})
afterAll(async () => {
  await server?.stop()
})

describe('renderer CRUD', () => {
  it('creates, lists a page (filtered by collection), reads, changes and deletes a renderer', async () => {
    const renderer = await createRenderer({ name: 'Post card', template: '<h2>{{title}}</h2>' })
    expect(renderer).toMatchObject({
      name: 'Post card',
      collection: posts,
      kind: 'card',
      template: '<h2>{{title}}</h2>',
    })
    const page = await request('GET', `${RENDERERS}?collection=${posts}&limit=1`, narrow.token)
    expect(page.status, page.text).toBe(200)
    expect(page.body).toMatchObject({ page: 1, limit: 1, total: 1, hasMore: false })
    expect(page.body.data.map((r: any) => r.id)).toEqual([renderer.id])
    expect((await request('GET', `${RENDERERS}?collection=elsewhere`, narrow.token)).body).toMatchObject({
      data: [],
      total: 0,
    })
    expect((await request('GET', `${RENDERERS}/${renderer.id}`, viewer.token)).body.data.name).toBe('Post card')
    const patched = await request('PATCH', `${RENDERERS}/${renderer.id}`, manager.token, {
      kind: 'detail',
      template: '<h1>{{title}}</h1>',
    })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body.data).toMatchObject({ kind: 'detail', template: '<h1>{{title}}</h1>' })
    refused(
      await request('POST', RENDERERS, manager.token, {
        name: 'Post card',
        collection: posts,
        kind: 'row',
        template: '',
      }),
      409,
      'already_exists',
    )
    expect((await request('DELETE', `${RENDERERS}/${renderer.id}`, manager.token)).status).toBe(204)
    refused(await request('GET', `${RENDERERS}/${renderer.id}`, manager.token), 404, 'not_found')
    refused(await request('DELETE', `${RENDERERS}/${renderer.id}`, manager.token), 404, 'not_found')
  })

  it('refuses anonymous callers (401) and callers without the permission (403)', async () => {
    const renderer = await createRenderer({ name: 'Guarded', template: '{{title}}' })
    for (const [method, path, body] of [
      ['GET', RENDERERS, undefined],
      ['GET', `${RENDERERS}/${renderer.id}`, undefined],
      ['POST', RENDERERS, { name: 'x', collection: posts, kind: 'card', template: '' }],
      ['PATCH', `${RENDERERS}/${renderer.id}`, { name: 'y' }],
      ['DELETE', `${RENDERERS}/${renderer.id}`, undefined],
      ['POST', `${RENDERERS}/${renderer.id}/render`, { recordId: openId }],
    ] as const) {
      refused(await request(method, path, undefined, body), 401, 'unauthorized')
      refused(await request(method, path, outsider.token, body), 403, 'forbidden')
    }
    // The built-in viewer reads and renders; it may not manage.
    expect((await request('GET', RENDERERS, viewer.token)).status).toBe(200)
    expect((await render(renderer.id, viewer.token, openId)).status).toBe(200)
    refused(
      await request('POST', RENDERERS, viewer.token, { name: 'v', collection: posts, kind: 'card', template: '' }),
      403,
      'forbidden',
    )
    refused(await request('DELETE', `${RENDERERS}/${renderer.id}`, narrow.token), 403, 'forbidden')
    expect((await request('GET', `${RENDERERS}/${renderer.id}`, manager.token)).body.data.name).toBe('Guarded')
  })
})

describe('the template is checked when saved', () => {
  it.each([
    ['an unclosed section', '{{#tags}}x', 'unclosed_section'],
    ['unescaped output', '{{{title}}}', 'unsupported_tag'],
    ['a partial', '{{> other}}', 'unsupported_tag'],
    ['an unknown field', '<p>{{title}} {{nope}}</p>', 'unknown_field'],
    ['an unknown field in an inverted section', '{{^title}}{{ghost}}{{/title}}', 'unknown_field'],
    ['a forbidden key', '{{title.__proto__}}', 'forbidden_key'],
  ])('%s is 422 naming template', async (_, template, code) => {
    const reply = await request('POST', RENDERERS, manager.token, {
      name: freshName('bad'),
      collection: posts,
      kind: 'row',
      template,
    })
    refused(reply, 422, 'validation_error')
    expect(reply.body.details).toMatchObject({ at: 'template', code })
    expect(reply.body.message).toMatch(/^template: /)
  })

  it('a change to an invalid template is refused and the renderer kept; a missing collection is 404', async () => {
    const renderer = await createRenderer({ name: 'Kept', template: '{{title}}' })
    const reply = await request('PATCH', `${RENDERERS}/${renderer.id}`, manager.token, { template: '{{missing}}' })
    refused(reply, 422, 'validation_error')
    expect(reply.body.details).toMatchObject({ at: 'template', field: 'missing' })
    expect((await request('GET', `${RENDERERS}/${renderer.id}`, manager.token)).body.data.template).toBe('{{title}}')
    refused(
      await request('POST', RENDERERS, manager.token, { name: 'x', collection: 'no_such', kind: 'row', template: '' }),
      404,
      'collection_not_found',
    )
    // The collection is opened as the saver: one they may not read is refused, nothing saved.
    const unread = await createCollection(server, owner.token, freshName('unread'), [
      { name: 'title', type: 'text', required: true },
    ])
    refused(
      await request('POST', RENDERERS, manager.token, { name: 'x', collection: unread, kind: 'row', template: '' }),
      403,
      'forbidden',
    )
    expect((await request('GET', `${RENDERERS}?collection=${unread}`, manager.token)).body.total).toBe(0)
    // Keys inside a plain section may be a list item's: not checked. System columns are known.
    await createRenderer({ name: 'Items', template: '{{#tags}}<i>{{.}}{{label}}</i>{{/tags}} {{id}} {{created_at}}' })
    refused(
      await request('POST', RENDERERS, manager.token, { name: 'x', collection: posts, kind: 'slide', template: '' }),
      400,
      'invalid_request',
    )
  })
})

describe('render, as the caller', () => {
  it('escapes record values (stored XSS stays text) and renders a field the allowlist hides as empty', async () => {
    const renderer = await createRenderer({
      name: 'Leaky',
      template:
        '<h2 title={{title}}>{{title}}</h2>|{{secret}}|{{#secret}}HAS-SECRET{{/secret}}{{^secret}}no-secret{{/secret}}|{{#tags}}<li>{{.}}</li>{{/tags}}',
    })
    const asManager = await render(renderer.id, manager.token, openId)
    expect(asManager.status, asManager.text).toBe(200)
    const escapedTitle = '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'
    expect(asManager.body.data).toMatchObject({ rendererId: renderer.id, recordId: openId, kind: 'card' })
    expect(asManager.body.data.html).toBe(
      `<h2 title=${escapedTitle}>${escapedTitle}</h2>|the-hidden-value|HAS-SECRET|<li>a</li><li>&lt;b&gt;</li><li>c</li>`,
    )
    expect(asManager.text).not.toContain('<script>')

    const asNarrow = await render(renderer.id, narrow.token, openId)
    expect(asNarrow.status, asNarrow.text).toBe(200)
    expect(asNarrow.body.data.html).toBe(
      `<h2 title=${escapedTitle}>${escapedTitle}</h2>||no-secret|<li>a</li><li>&lt;b&gt;</li><li>c</li>`,
    )
    expect(asNarrow.text).not.toContain('the-hidden-value')
    expect(asNarrow.text).not.toContain('HAS-SECRET')
  })

  it("a record outside the caller's item_filter, of another collection or unknown is 404 record_not_found", async () => {
    const renderer = await createRenderer({ name: 'Titles', template: '{{title}}|{{secret}}' })
    expect((await render(renderer.id, manager.token, closedId)).body.data.html).toBe('Closed post|closed-secret')
    const hidden = await render(renderer.id, narrow.token, closedId)
    refused(hidden, 404, 'record_not_found')
    expect(hidden.text).not.toContain('Closed post')
    refused(await render(renderer.id, narrow.token, 'f'.repeat(32)), 404, 'record_not_found')
    const other = await createCollection(server, owner.token, freshName('others'), [
      { name: 'title', type: 'text', required: true },
    ])
    const elsewhere = await request('POST', recordsPath(other), owner.token, { title: 'other collection' })
    refused(
      await render(renderer.id, owner.token, elsewhere.body.id ?? elsewhere.body.data?.id),
      404,
      'record_not_found',
    )
  })

  it('a render that would do unbounded work stops with limit_exceeded (decision 046)', async () => {
    const deep = `${'{{#tags}}'.repeat(20)}x${'{{/tags}}'.repeat(20)}`
    const renderer = await createRenderer({ name: 'Deep', template: deep })
    const many = await request('POST', recordsPath(posts), owner.token, {
      title: 'many',
      status: 'open',
      tags: Array.from({ length: 10 }, (_, i) => i),
    })
    refused(await render(renderer.id, manager.token, many.body.id ?? many.body.data?.id), 400, 'limit_exceeded')
  })
})

describe('another project', () => {
  it("another project's renderer is not found here, even to a super_admin", async () => {
    const project = await request('POST', '/api/v1/projects', owner.token, { name: 'elsewhere' })
    expect(project.status, project.text).toBe(201)
    const there = { 'x-project-id': project.body.data.id as string }
    const created = await request(
      'POST',
      '/api/v1/collections',
      owner.token,
      { name: 'notes', fields: [{ name: 'title', type: 'text', required: true }] },
      there,
    )
    expect(created.status, created.text).toBe(201)
    const note = await request('POST', recordsPath('notes'), owner.token, { title: 'elsewhere secret' }, there)
    const noteId = note.body.id ?? note.body.data?.id
    const theirs = await request(
      'POST',
      RENDERERS,
      owner.token,
      { name: 'Theirs', collection: 'notes', kind: 'row', template: '{{title}}' },
      there,
    )
    expect(theirs.status, theirs.text).toBe(201)
    const id = theirs.body.data.id as string
    for (const token of [owner.token, manager.token]) {
      refused(await request('GET', `${RENDERERS}/${id}`, token), 404, 'not_found')
      refused(await request('PATCH', `${RENDERERS}/${id}`, token, { name: 'mine' }), 404, 'not_found')
      refused(await render(id, token, noteId), 404, 'not_found')
      refused(await request('DELETE', `${RENDERERS}/${id}`, token), 404, 'not_found')
    }
    expect((await request('GET', `${RENDERERS}?limit=100`, owner.token)).body.data.map((r: any) => r.id)).not.toContain(
      id,
    )
    const still = await request('POST', `${RENDERERS}/${id}/render`, owner.token, { recordId: noteId }, there)
    expect(still.body.data.html).toBe('elsewhere secret')
  })
})

describe('removal with the collection', () => {
  it('deleting a collection removes its renderers; others stay', async () => {
    const gone = await createCollection(server, owner.token, freshName('gone'), [
      { name: 'title', type: 'text', required: true },
    ])
    const doomed = await createRenderer({ name: 'Doomed', collection: gone, template: '{{title}}' }, owner.token)
    const kept = await createRenderer({ name: 'Kept here', template: '{{title}}' })
    const deleted = await request('DELETE', `/api/v1/collections/${gone}`, owner.token)
    expect(deleted.status, deleted.text).toBe(200)
    refused(await request('GET', `${RENDERERS}/${doomed.id}`, manager.token), 404, 'not_found')
    expect((await request('GET', `${RENDERERS}?collection=${gone}`, manager.token)).body.total).toBe(0)
    expect((await request('GET', `${RENDERERS}/${kept.id}`, manager.token)).status).toBe(200)
    // A new collection of the same name starts with none.
    await createCollection(server, owner.token, gone, [{ name: 'title', type: 'text', required: true }])
    expect((await request('GET', `${RENDERERS}?collection=${gone}`, manager.token)).body.total).toBe(0)
  })
})
