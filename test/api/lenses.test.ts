import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { accountWithGrants } from './collections-support.js'

/**
 * Lenses (issue 17 item 5, decision 041) over real HTTP: CRUD of drafts, publish to immutable versions,
 * render as html, csv and md with declared URL parameters, as the caller (row and column rules of the
 * records service), escaping in every format, the permissions of system/lenses, and errors in the envelope.
 */
const LENSES = '/api/v1/lenses'
const ORDERS = '/api/v1/collections/orders/records'
let server: TestServer
let owner: Account
/** system/lenses manage; reads every order. */
let manager: Account
/** system/lenses read; reads every order. */
let reader: Account
/** system/lenses read; reads orders' title, status and total only. */
let narrow: Account
/** system/lenses read; reads open orders only. */
let openOnly: Account
/** Reads orders, no system/lenses grant. */
let outsider: Account

const request = (method: string, path: string, token: string | undefined, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token, body })

async function createLens(body: Record<string, unknown>, token = manager.token): Promise<any> {
  const reply = await request('POST', LENSES, token, { collection: 'orders', ...body })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data
}

async function published(body: Record<string, unknown>): Promise<string> {
  const lens = await createLens(body)
  const reply = await request('POST', `${LENSES}/${lens.id}/publish`, manager.token, { changeSummary: 'first' })
  expect(reply.status, reply.text).toBe(200)
  return lens.id as string
}

const render = (id: string, token: string, query = ''): Promise<Reply> =>
  request('GET', `${LENSES}/${id}/render${query}`, token)

/** The error envelope, never a 500. */
function refused(reply: Reply, status: number, code: string): void {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.body).toMatchObject({ error: code, message: expect.any(String), details: expect.any(Object) })
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const fields = [
    { name: 'title', type: 'text', required: true },
    { name: 'status', type: 'text', required: false },
    { name: 'total', type: 'number', required: false },
    { name: 'secret', type: 'text', required: false },
    { name: 'note', type: 'text', required: false },
  ]
  const created = await request('POST', '/api/v1/collections', owner.token, { name: 'orders', fields })
  expect(created.status, created.text).toBe(201)
  const rows = [
    { title: 'Widget', status: 'open', total: 10, secret: 's-widget', note: '<script>alert(1)</script>' },
    { title: '=SUM(A1:A2)', status: 'open', total: 20, secret: 's-formula', note: 'a "quoted", comma\nnewline' },
    { title: 'Closed one', status: 'closed', total: -5, secret: 's-closed', note: '@cmd' },
  ]
  for (const row of rows) expect((await request('POST', ORDERS, owner.token, row)).status).toBe(201)
  const read = { resource: 'collections/orders', action: 'read' }
  manager = await accountWithGrants(server, owner.token, [{ resource: 'system/lenses', action: 'manage' }, read])
  reader = await accountWithGrants(server, owner.token, [{ resource: 'system/lenses', action: 'read' }, read])
  narrow = await accountWithGrants(server, owner.token, [
    { resource: 'system/lenses', action: 'read' },
    { ...read, fields: ['title', 'status', 'total'] },
  ] as never)
  openOnly = await accountWithGrants(server, owner.token, [
    { resource: 'system/lenses', action: 'read' },
    { ...read, item_filter: { status: { _eq: 'open' } } },
  ] as never)
  outsider = await accountWithGrants(server, owner.token, [read])
})
afterAll(async () => {
  await server?.stop()
})

describe('lens CRUD and versions', () => {
  it('creates a draft, lists, reads, changes and deletes it', async () => {
    const lens = await createLens({
      name: 'All orders',
      fields: ['title', 'total'],
      sort: [{ field: 'total', order: 'asc' }],
    })
    expect(lens).toMatchObject({
      name: 'All orders',
      status: 'draft',
      currentVersion: 0,
      publishedVersion: null,
      hasUnpublishedChanges: true,
      enabled: true,
      limit: 100,
      filter: null,
      params: [],
    })
    const listed = await request('GET', `${LENSES}?limit=100`, reader.token)
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body.data.map((l: any) => l.id)).toContain(lens.id)
    expect((await request('GET', `${LENSES}/${lens.id}`, reader.token)).body.data.fields).toEqual(['title', 'total'])
    const patched = await request('PATCH', `${LENSES}/${lens.id}`, manager.token, {
      description: 'every order',
      fields: null,
    })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body.data).toMatchObject({ description: 'every order', fields: null })
    expect((await request('DELETE', `${LENSES}/${lens.id}`, manager.token)).status).toBe(204)
    refused(await request('GET', `${LENSES}/${lens.id}`, reader.token), 404, 'not_found')
    refused(await request('DELETE', `${LENSES}/${lens.id}`, manager.token), 404, 'not_found')
  })

  it('renders only a published version; a draft change reaches renders at the next publish; versions are immutable', async () => {
    const lens = await createLens({
      name: 'Versioned',
      fields: ['title'],
      sort: [{ field: 'total', order: 'asc' }],
      limit: 1,
    })
    refused(await render(lens.id, reader.token, '?format=csv'), 409, 'conflict')
    // The draft, for those who may edit it.
    const draft = await render(lens.id, manager.token, '?format=csv&draft=true')
    expect(draft.status, draft.text).toBe(200)
    expect(draft.headers.get('x-lens-version')).toBe('draft')
    refused(await render(lens.id, reader.token, '?format=csv&draft=true'), 403, 'forbidden')

    const first = await request('POST', `${LENSES}/${lens.id}/publish`, manager.token, { changeSummary: 'one row' })
    expect(first.body.data).toMatchObject({
      status: 'published',
      currentVersion: 1,
      publishedVersion: 1,
      hasUnpublishedChanges: false,
    })
    expect((await render(lens.id, reader.token, '?format=csv')).text).toBe('title\r\nClosed one\r\n')

    expect(
      (await request('PATCH', `${LENSES}/${lens.id}`, manager.token, { limit: 3, fields: ['title', 'total'] })).body
        .data.hasUnpublishedChanges,
    ).toBe(true)
    // Still version 1 for readers; the draft shows the change.
    const still = await render(lens.id, reader.token, '?format=csv')
    expect(still.text).toBe('title\r\nClosed one\r\n')
    expect(still.headers.get('x-lens-version')).toBe('1')
    expect((await render(lens.id, manager.token, '?format=csv&draft=1')).text).toBe(
      "title,total\r\nClosed one,-5\r\nWidget,10\r\n'=SUM(A1:A2),20\r\n",
    )

    expect((await request('POST', `${LENSES}/${lens.id}/publish`, manager.token, {})).body.data.publishedVersion).toBe(
      2,
    )
    expect((await render(lens.id, reader.token, '?format=csv')).text).toBe(
      "title,total\r\nClosed one,-5\r\nWidget,10\r\n'=SUM(A1:A2),20\r\n",
    )
    const versions = await request('GET', `${LENSES}/${lens.id}/versions`, reader.token)
    expect(versions.status, versions.text).toBe(200)
    expect(versions.body.data.map((v: any) => [v.version, v.limit, v.changeSummary])).toEqual([
      [2, 3, ''],
      [1, 1, 'one row'],
    ])
    expect(versions.body.data[1]).toMatchObject({ fields: ['title'], publishedBy: manager.id })
  })

  it('a disabled lens does not render', async () => {
    const id = await published({ name: 'Switched off', fields: ['title'] })
    expect((await request('PATCH', `${LENSES}/${id}`, manager.token, { enabled: false })).status).toBe(200)
    const reply = await render(id, reader.token, '?format=md')
    refused(reply, 409, 'conflict')
    expect(reply.body.details.reason).toBe('disabled')
  })
})

describe('formats and escaping', () => {
  let id: string
  beforeAll(async () => {
    id = await published({
      name: 'Orders & notes',
      fields: ['title', 'total', 'note'],
      sort: [{ field: 'total', order: 'desc' }],
    })
  })

  it('html: every record value is text, the page runs nothing and loads nothing', async () => {
    const reply = await render(id, reader.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(reply.text).not.toContain('<script>')
    expect(reply.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(reply.text).toContain('<title>Orders &amp; notes</title>')
    expect(reply.text).toContain('<td>a &quot;quoted&quot;, comma\nnewline</td>')
    const policy = reply.headers.get('content-security-policy') ?? ''
    expect(policy).toContain('sandbox')
    expect(policy).toContain("default-src 'none'")
    expect(policy).not.toContain('script-src')
  })

  it('csv: quotes, commas and newlines quoted; formula-like text prefixed; numbers left as numbers', async () => {
    const reply = await render(id, reader.token, '?format=csv')
    expect(reply.status, reply.text).toBe(200)
    expect(reply.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(reply.text).toBe(
      [
        'title,total,note',
        '\'=SUM(A1:A2),20,"a ""quoted"", comma\nnewline"',
        'Widget,10,<script>alert(1)</script>',
        "Closed one,-5,'@cmd",
        '',
      ].join('\r\n'),
    )
  })

  it('md: a table whose cells cannot break out of their row or carry HTML', async () => {
    const reply = await render(id, reader.token, '?format=md')
    expect(reply.status, reply.text).toBe(200)
    expect(reply.headers.get('content-type')).toBe('text/markdown; charset=utf-8')
    expect(reply.text).not.toContain('<script>')
    const lines = reply.text.split('\n')
    expect(lines).toContain('| title | total | note |')
    expect(lines).toContain('| Widget | 10 | &lt;script&gt;alert\\(1\\)&lt;/script&gt; |')
    expect(lines).toContain('| =SUM\\(A1:A2\\) | 20 | a &quot;quoted&quot;, comma newline |')
  })

  it('a custom template: values escaped, sections over rows, no unescaped form accepted', async () => {
    const html =
      '<ul>{{#rows}}<li data-x={{title}}>{{title}}: {{note}}</li>{{/rows}}</ul>{{^rows}}none{{/rows}} {{count}}'
    const lens = await createLens({
      name: 'Custom',
      fields: ['title', 'note'],
      sort: [{ field: 'total', order: 'asc' }],
      template: { html, md: '{{#rows}}- {{title}}\n{{/rows}}' },
    })
    const reply = await render(lens.id, manager.token, '?draft=true')
    expect(reply.text).toBe(
      '<ul><li data-x=Closed one>Closed one: @cmd</li><li data-x=Widget>Widget: &lt;script&gt;alert(1)&lt;/script&gt;</li>' +
        '<li data-x=&#61;SUM(A1:A2)>&#61;SUM(A1:A2): a &quot;quoted&quot;, comma\nnewline</li></ul> 3',
    )
    expect((await render(lens.id, manager.token, '?draft=true&format=md')).text).toBe(
      '- Closed one\n- Widget\n- =SUM\\(A1:A2\\)\n',
    )
    for (const template of [
      '{{{note}}}',
      '{{&note}}',
      '{{> other}}',
      '{{= $x }}',
      '{{#rows}}',
      '{{/rows}}',
      '{{constructor}}',
    ]) {
      refused(
        await request('POST', LENSES, manager.token, {
          name: `bad ${template}`,
          collection: 'orders',
          template: { html: template },
        }),
        422,
        'validation_error',
      )
    }
    refused(
      await request('POST', LENSES, manager.token, {
        name: 'refresh',
        collection: 'orders',
        template: { html: '<meta http-equiv="refresh" content="0;url=https://evil.example/">' },
      }),
      422,
      'validation_error',
    )
  })

  it('an unknown format is refused', async () => {
    refused(await render(id, reader.token, '?format=pdf'), 400, 'invalid_request')
  })
})

describe('parameters', () => {
  let id: string
  beforeAll(async () => {
    id = await published({
      name: 'By status',
      fields: ['title'],
      sort: [{ field: 'total', order: 'asc' }],
      params: [
        { name: 'status', type: 'text', values: ['open', 'closed'], default: 'open' },
        { name: 'min', type: 'number', default: -100 },
        { name: 'title', type: 'text' },
      ],
      filter: { status: { _eq: '{{params.status}}' }, total: { _gte: '{{params.min}}' } },
      template: { md: 'status={{params.status}} min={{params.min}}\n{{#rows}}{{title}};{{/rows}}' },
    })
  })

  it('substitutes declared parameters with their type, defaults filled in', async () => {
    expect((await render(id, reader.token, '?format=md')).text).toBe('status=open min=\\-100\nWidget;=SUM\\(A1:A2\\);')
    expect((await render(id, reader.token, '?format=csv&status=closed')).text).toBe('title\r\nClosed one\r\n')
    expect((await render(id, reader.token, '?format=csv&min=15')).text).toBe("title\r\n'=SUM(A1:A2)\r\n")
  })

  it('refuses an unknown parameter, a value of the wrong type or outside its values, a repeated one', async () => {
    for (const query of ['?foo=1', '?status=pending', '?min=abc', '?min=', '?status=open&status=closed']) {
      refused(await render(id, reader.token, `${query}&format=csv`), 400, 'invalid_request')
    }
  })

  it('a parameter is a value, never filter structure', async () => {
    const lens = await published({
      name: 'By title',
      fields: ['title'],
      params: [{ name: 'q', type: 'text', required: true }],
      filter: { title: { _eq: '{{params.q}}' } },
    })
    refused(await render(lens, reader.token, '?format=csv'), 400, 'invalid_request')
    const sneaky = encodeURIComponent(JSON.stringify({ _neq: '' }))
    expect((await render(lens, reader.token, `?format=csv&q=${sneaky}`)).text).toBe('title\r\n')
    expect((await render(lens, reader.token, '?format=csv&q=Widget')).text).toBe('title\r\nWidget\r\n')
  })

  it('a filter naming an undeclared parameter, or anything but params, is refused when saved', async () => {
    for (const filter of [
      { status: { _eq: '{{params.nope}}' } },
      { status: { _eq: '{{$trigger.body}}' } },
      { status: { _eq: '{{= 1 + 1 }}' } },
    ]) {
      refused(
        await request('POST', LENSES, manager.token, { name: 'bad filter', collection: 'orders', filter }),
        422,
        'validation_error',
      )
    }
  })
})

describe("row and column rules: a render is the caller's read", () => {
  it('a column the caller may not read never appears, in any format or template', async () => {
    const id = await published({
      name: 'Leaky',
      fields: ['title', 'secret', 'note'],
      sort: [{ field: 'secret', order: 'asc' }],
      template: { html: '{{#rows}}[{{title}}|{{secret}}|{{note}}]{{/rows}}{{#columns}}<{{name}}>{{/columns}}' },
    })
    for (const format of ['html', 'csv', 'md']) {
      const reply = await render(id, narrow.token, `?format=${format}`)
      expect(reply.status, reply.text).toBe(200)
      expect(reply.text).not.toMatch(/s-widget|s-formula|s-closed|secret|alert|quoted|@cmd/)
    }
    expect((await render(id, narrow.token, '?format=csv')).text.split('\r\n')[0]).toBe('title')
    // The same lens shows them to a caller who may read them.
    expect((await render(id, reader.token, '?format=csv')).text).toContain('s-widget')
  })

  it('a filter on a column the caller may not read is refused for that caller, not answered', async () => {
    const id = await published({ name: 'Probe', fields: ['title'], filter: { secret: { _eq: 's-widget' } } })
    refused(await render(id, narrow.token, '?format=csv'), 403, 'forbidden')
    expect((await render(id, reader.token, '?format=csv')).text).toBe('title\r\nWidget\r\n')
  })

  it("rows outside the caller's row rule never appear", async () => {
    const id = await published({
      name: 'Everything',
      fields: ['title', 'status'],
      sort: [{ field: 'total', order: 'asc' }],
    })
    expect((await render(id, openOnly.token, '?format=csv')).text).toBe(
      "title,status\r\nWidget,open\r\n'=SUM(A1:A2),open\r\n",
    )
  })
})

describe('permissions and errors', () => {
  let id: string
  beforeAll(async () => {
    id = await published({ name: 'Guarded', fields: ['title'] })
  })

  it('system/lenses:read renders and reads; managing needs create, update, delete', async () => {
    refused(await render(id, outsider.token, '?format=csv'), 403, 'forbidden')
    refused(await request('GET', LENSES, outsider.token), 403, 'forbidden')
    refused(await request('POST', LENSES, reader.token, { name: 'x', collection: 'orders' }), 403, 'forbidden')
    refused(await request('PATCH', `${LENSES}/${id}`, reader.token, { name: 'x' }), 403, 'forbidden')
    refused(await request('POST', `${LENSES}/${id}/publish`, reader.token, {}), 403, 'forbidden')
    refused(await request('DELETE', `${LENSES}/${id}`, reader.token), 403, 'forbidden')
    refused(await request('GET', `${LENSES}/${id}/render`, undefined), 401, 'unauthorized')
    // A lens is no way around the collection's own read grant.
    const lensOnly = await accountWithGrants(server, owner.token, [{ resource: 'system/lenses', action: 'read' }])
    refused(await render(id, lensOnly.token, '?format=csv'), 403, 'forbidden')
  })

  it('a saved query is checked as the saver', async () => {
    refused(
      await request('POST', LENSES, manager.token, { name: 'nowhere', collection: 'missing' }),
      404,
      'collection_not_found',
    )
    refused(
      await request('POST', LENSES, manager.token, { name: 'unknown field', collection: 'orders', fields: ['nope'] }),
      422,
      'validation_error',
    )
    refused(
      await request('POST', LENSES, manager.token, {
        name: 'bad sort',
        collection: 'orders',
        sort: [{ field: 'nope' }],
      }),
      422,
      'validation_error',
    )
    refused(
      await request('POST', LENSES, manager.token, {
        name: 'bad op',
        collection: 'orders',
        filter: { title: { _what: 1 } },
      }),
      422,
      'validation_error',
    )
    refused(
      await request('POST', LENSES, manager.token, {
        name: 'bad default',
        collection: 'orders',
        params: [{ name: 'n', type: 'integer', default: 'x' }],
      }),
      422,
      'validation_error',
    )
    refused(
      await request('POST', LENSES, manager.token, {
        name: 'reserved',
        collection: 'orders',
        params: [{ name: 'format' }],
      }),
      400,
      'invalid_request',
    )
    refused(
      await request('POST', LENSES, manager.token, { name: 'Guarded', collection: 'orders' }),
      409,
      'already_exists',
    )
    refused(
      await request('POST', LENSES, manager.token, { name: 'extra', collection: 'orders', surprise: 1 }),
      400,
      'invalid_request',
    )
  })

  it('hostile input is answered in the envelope, never with a 500', async () => {
    const lens = await createLens({ name: 'Hostile', fields: ['title'], params: [{ name: 'q' }] })
    const replies = [
      await request('POST', LENSES, manager.token, {
        name: 'arr',
        collection: 'orders',
        filter: [{ nonsense: true }, 'x', 1],
      }),
      await request('POST', LENSES, manager.token, { name: 'x'.repeat(300), collection: 'orders' }),
      await request('POST', LENSES, manager.token, {
        name: 'deep',
        collection: 'orders',
        template: { md: '{{#a}}'.repeat(30) + '{{/a}}'.repeat(30) },
      }),
      await request('POST', LENSES, manager.token, {
        name: 'proto',
        collection: 'orders',
        filter: { title: { _eq: '{{params.__proto__}}' } },
        params: [{ name: 'p' }],
      }),
      await request('PATCH', `${LENSES}/${lens.id}`, manager.token, { template: { md: '{{#rows}}' } }),
      await request('PATCH', `${LENSES}/${lens.id}`, manager.token, { limit: 0 }),
      await server.request('POST', LENSES, {
        token: manager.token,
        rawBody: '{not json',
        headers: { 'content-type': 'application/json' },
      }),
      await request('GET', `${LENSES}?page=0`, manager.token),
      await render(lens.id, manager.token, `?draft=true&q=${'a'.repeat(5000)}`),
      await render(lens.id, manager.token, '?draft=true&__proto__=1'),
      await render(lens.id, manager.token, '?draft=maybe'),
    ]
    for (const reply of replies) {
      expect(reply.status, reply.text).toBeGreaterThanOrEqual(400)
      expect(reply.status, reply.text).toBeLessThan(500)
      expect(reply.body, reply.text).toMatchObject({
        error: expect.any(String),
        message: expect.any(String),
        details: expect.any(Object),
      })
    }
  })

  it('unknown ids are 404 everywhere', async () => {
    for (const [method, path] of [
      ['GET', `${LENSES}/nope`],
      ['PATCH', `${LENSES}/nope`],
      ['DELETE', `${LENSES}/nope`],
      ['POST', `${LENSES}/nope/publish`],
      ['GET', `${LENSES}/nope/versions`],
      ['GET', `${LENSES}/nope/render`],
    ] as const) {
      refused(
        await request(method, path, manager.token, method === 'PATCH' || method === 'POST' ? {} : undefined),
        404,
        'not_found',
      )
    }
  })
})

describe('render_lens_template in a flow', () => {
  const BASE = '/api/v1/automate'
  let lensId: string
  /** Runs flows; reads orders' title, status and total only; writes files. */
  let runner: Account
  /** Same grants as runner, another person: may update only the files it uploaded. */
  let rival: Account
  /** Runs flows and reads the lens, but may not write files. */
  let noFiles: Account

  async function run(token: string, config: Record<string, unknown>): Promise<any> {
    const operations = [{ key: 'report', type: 'render_lens_template', config }]
    const created = await server.request('POST', `${BASE}/flows`, {
      token,
      body: { name: 'lens report', triggerType: 'manual', triggerConfig: {}, operations },
    })
    expect(created.status, created.text).toBe(201)
    const flowId = created.body.data.id as string
    expect(
      (await server.request('POST', `${BASE}/flows/${flowId}/publish`, { token, body: { changeSummary: 't' } })).status,
    ).toBe(200)
    expect(
      (await server.request('PATCH', `${BASE}/flows/${flowId}/status`, { token, body: { status: 'active' } })).status,
    ).toBe(200)
    const started = await server.request('POST', `${BASE}/flows/${flowId}/execute`, { token, body: {} })
    expect(started.status, started.text).toBe(202)
    const deadline = Date.now() + 30_000
    for (;;) {
      const reply = await server.request('GET', `${BASE}/runs/${started.body.data.runId}`, { token: owner.token })
      if (reply.body.data && !['pending', 'running'].includes(reply.body.data.status))
        return reply.body.data.stepLogs.find((s: any) => s.key === 'report')
      if (Date.now() > deadline) throw new Error(`run did not end: ${reply.text}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  async function download(token: string, fileId: string): Promise<string> {
    const reply = await request('GET', `/api/v1/files/download-token/${fileId}`, token)
    expect(reply.status, reply.text).toBe(200)
    const url = reply.body.downloadUrl as string
    return (await fetch(url.startsWith('http') ? url : `${server.url}${url}`)).text()
  }

  beforeAll(async () => {
    lensId = await published({
      name: 'Flow report',
      fields: ['title', 'total', 'secret'],
      sort: [{ field: 'total', order: 'asc' }],
      params: [{ name: 'status', type: 'text', default: 'open' }],
      filter: { status: { _eq: '{{params.status}}' } },
    })
    const grants = [
      { resource: 'system/automate', action: 'manage' },
      { resource: 'system/lenses', action: 'read' },
      { resource: 'system/files', action: 'read' },
      { resource: 'system/files', action: 'create' },
      { resource: 'system/files', action: 'update', item_filter: { uploadedBy: { _eq: '$CURRENT_USER' } } },
      { resource: 'collections/orders', action: 'read', fields: ['title', 'status', 'total'] },
    ]
    runner = await accountWithGrants(server, owner.token, grants as never)
    rival = await accountWithGrants(server, owner.token, grants as never)
    noFiles = await accountWithGrants(server, owner.token, [grants[0]!, grants[1]!, grants[5]!] as never)
  })

  it("renders as the run's user and stores the output at r2Key as a private file of that user", async () => {
    const step = await run(runner.token, {
      templateId: lensId,
      format: 'csv',
      urlParams: { status: 'closed' },
      saveToR2: true,
      r2Key: 'reports/closed.csv',
    })
    expect(step.status, JSON.stringify(step)).toBe('completed')
    expect(step.output).toMatchObject({
      content: 'title,total\r\nClosed one,-5\r\n',
      format: 'csv',
      version: 1,
      rows: 1,
    })
    const file = step.output.file
    // Stored as any file is, at its own id's key; the flow key is on the row (decision 040).
    expect(file.r2Key).toBe(`projects/${server.app.defaultProject.id}/files/${file.id}/closed.csv`)
    const meta = await request('GET', `/api/v1/files/${file.id}`, runner.token)
    expect(meta.body.data).toMatchObject({
      filename: 'closed.csv',
      mimeType: 'text/csv',
      visibility: 'private',
      uploadedBy: runner.id,
      flowKey: 'reports/closed.csv',
    })
    expect(await download(runner.token, file.id)).toBe('title,total\r\nClosed one,-5\r\n')
    // Private: another person of the project does not see it.
    refused(await request('GET', `/api/v1/files/${file.id}`, rival.token), 404, 'not_found')

    // Run again: the same file gets the new content.
    const again = await run(runner.token, {
      templateId: lensId,
      format: 'csv',
      saveToR2: true,
      r2Key: 'reports/closed.csv',
    })
    expect(again.status, JSON.stringify(again)).toBe('completed')
    expect(again.output.file.id).toBe(file.id)
    expect(await download(runner.token, file.id)).toBe("title,total\r\nWidget,10\r\n'=SUM(A1:A2),20\r\n")
    // Still one file at that key, its size the new content's.
    const listed = await request('GET', '/api/v1/files?limit=100', owner.token)
    const atKey = listed.body.data.filter((f: any) => f.flowKey === 'reports/closed.csv')
    expect(atKey.map((f: any) => [f.id, f.sizeBytes])).toEqual([[file.id, again.output.file.sizeBytes]])
  })

  it("refuses an r2Key holding another person's file, and leaves that file as it was", async () => {
    const mine = await run(runner.token, {
      templateId: lensId,
      format: 'md',
      saveToR2: true,
      r2Key: 'shared/report.md',
    })
    expect(mine.status, JSON.stringify(mine)).toBe('completed')
    const theirs = await run(rival.token, {
      templateId: lensId,
      format: 'csv',
      urlParams: { status: 'closed' },
      saveToR2: true,
      r2Key: 'shared/report.md',
    })
    expect(theirs.status).toBe('failed')
    expect(theirs.error).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/may not replace/) })
    expect(await download(runner.token, mine.output.file.id)).toBe(mine.output.content)
    const meta = await request('GET', `/api/v1/files/${mine.output.file.id}`, runner.token)
    expect(meta.body.data).toMatchObject({
      sizeBytes: mine.output.file.sizeBytes,
      uploadedBy: runner.id,
      flowKey: 'shared/report.md',
    })
  })

  it('refuses a key that is not a relative path, and a user who may not write files', async () => {
    for (const r2Key of ['../other/x.csv', '/abs.csv', 'a//b.csv', `projects/x/../../y.csv`]) {
      const step = await run(runner.token, { templateId: lensId, format: 'csv', saveToR2: true, r2Key })
      expect(step.status, r2Key).toBe('failed')
      expect(step.error, r2Key).toMatchObject({
        code: 'invalid_request',
        message: expect.stringMatching(/^key: a file id, a file's r2Key, or a relative path/),
      })
    }
    const denied = await run(noFiles.token, {
      templateId: lensId,
      format: 'csv',
      saveToR2: true,
      r2Key: 'reports/denied.csv',
    })
    expect(denied.status).toBe('failed')
    expect(denied.error).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/system\/files:create/) })
    // Rendering alone needs no file permission.
    expect((await run(noFiles.token, { templateId: lensId, format: 'csv' })).status).toBe('completed')
  })
})
