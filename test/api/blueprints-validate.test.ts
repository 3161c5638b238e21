import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { archiveRefusals } from '../../src/modules/blueprints/archive.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { streamedZipBomb, utf8, zipBase64, zipBytes } from '../support/zip.js'

/**
 * POST /api/v1/blueprints/validate over real HTTP (issue 30 item 1, decision 068): any signed-in caller, a
 * document as source or as a base64 zip, 200 with ok and every diagnostic (a failing document too), the
 * body errors (400, 413) and every archive refusal with its details.code. What the document says is in
 * src/modules/blueprints/document/*.test.ts; here is what a client sees.
 */
const PATH = '/api/v1/blueprints/validate'
let server: TestServer
let owner: Account
/** A person whose role holds no grant at all: validate needs only a sign-in. */
let nobody: Account

/** As the grantless person, or (`as: null`) with no credential at all. */
const validate = (body: unknown, as: string | null = nobody.token): Promise<Reply> =>
  server.request('POST', PATH, { token: as ?? undefined, body })

/** A small app: a namespace, a secret, two assemblies, three bricks; the prose carries a marker never echoed. */
const helpDesk = `---
format: service-blueprint-v1
id: help-desk
name: Help desk
version: 1.2.0
params:
  - name: prefix
    type: identifier
    namespace: true
    default: desk
  - name: team
    type: string
  - name: apiToken
    type: secret
assemblies:
  core:
    title: Core
    required: true
    bricks: [tickets, agents]
  menu:
    title: Menu
    bricks: [menu]
---

# Help desk

PROSE-MARKER-7f3a: this text is the author's and never comes back.

\`\`\`service:collection id=tickets title="Tickets"
{ "name": "\${params.prefix}_tickets", "fields": [{ "name": "title", "type": "text" }], "accessPreset": "private" }
\`\`\`

\`\`\`service:role id=agents needs=tickets
{ "name": "\${params.prefix}_agents", "description": "Agents of \${params.team}" }
\`\`\`

\`\`\`service:nav id=menu needs=tickets title="Menu item"
{ "label": "\${params.prefix} tickets", "target": { "kind": "collection", "ref": "\${params.prefix}_tickets" } }
\`\`\`
`

const expectedHelpDesk = {
  ok: true,
  diagnostics: [],
  blueprint: {
    id: 'help-desk',
    name: 'Help desk',
    version: '1.2.0',
    publisher: null,
    params: [
      { name: 'prefix', type: 'identifier', namespace: true, required: false, secret: false },
      { name: 'team', type: 'string', namespace: false, required: true, secret: false },
      { name: 'apiToken', type: 'secret', namespace: false, required: true, secret: true },
    ],
    assemblies: [
      { key: 'core', title: 'Core', required: true, bricks: ['tickets', 'agents'] },
      { key: 'menu', title: 'Menu', required: false, bricks: ['menu'] },
    ],
  },
  bricks: [
    { id: 'tickets', kind: 'collection', needs: [], title: 'Tickets' },
    { id: 'agents', kind: 'role', needs: ['tickets'], title: null },
    { id: 'menu', kind: 'nav', needs: ['tickets'], title: 'Menu item' },
  ],
}

function refused(reply: Reply, status: number, error: string, code?: string): void {
  expect(reply.status, reply.text).toBe(status)
  expect(Object.keys(reply.body).sort()).toEqual(['details', 'error', 'message'])
  expect(reply.body.error).toBe(error)
  if (code) expect(reply.body.details.code).toBe(code)
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const role = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name: 'nobody' } })
  expect(role.status, role.text).toBe(201)
  nobody = await createAccount(server, owner.token, { role: 'nobody' })
})
afterAll(async () => {
  await server?.stop()
})

describe('POST /api/v1/blueprints/validate: who may call', () => {
  it('401 for an anonymous caller, whatever the body', async () => {
    refused(await validate({ source: helpDesk }, null), 401, 'unauthorized')
    refused(await validate({}, null), 401, 'unauthorized')
    refused(await validate({ source: 'x'.repeat(1_000_001) }, null), 401, 'unauthorized')
  })

  it('any signed-in person, with no grant at all', async () => {
    const reply = await validate({ source: helpDesk })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ data: expectedHelpDesk })
  })

  it('an API key', async () => {
    const key = await server.request('POST', '/api/auth/api-keys', {
      token: owner.token,
      body: { label: 'ci', capabilities: [] },
    })
    expect(key.status, key.text).toBe(201)
    const reply = await validate({ source: helpDesk }, key.body.raw)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.ok).toBe(true)
  })

  it('the service refuses an anonymous principal on its own', async () => {
    const { principals } = await import('../../src/lib/principal.js')
    await expect(
      server.app.services.blueprints.validate(principals.anonymous(server.app.defaultProject.id), { source: helpDesk }),
    ).rejects.toThrow(expect.objectContaining({ code: 'unauthorized' }))
  })
})

describe('POST /api/v1/blueprints/validate: answers', () => {
  it('never echoes the source (prose, defaults, bodies)', async () => {
    const reply = await validate({ source: helpDesk })
    expect(reply.text).not.toContain('PROSE-MARKER-7f3a')
    expect(reply.text).not.toContain('Agents of')
    expect(reply.text).not.toContain('"desk"')
  })

  it('a failing document is 200 with ok false and each diagnostic', async () => {
    const source = helpDesk
      .replace('version: 1.2.0', 'version: 1.2')
      .replace('needs=tickets title="Menu item"', 'needs=ghost')
      .replace('"${params.prefix}_agents"', '"agents"')
      .replace(
        '  - name: apiToken\n    type: secret\n',
        '  - name: apiToken\n    type: secret\n    default: SECRET-DEFAULT-VALUE\n',
      )
    const reply = await validate({ source })
    expect(reply.status, reply.text).toBe(200)
    const line = (needle: string) => source.split('\n').findIndex((l) => l.includes(needle)) + 1
    expect(reply.body.data.ok).toBe(false)
    expect(reply.body.data.diagnostics).toEqual([
      {
        severity: 'error',
        code: 'envelope.invalid_version',
        message: expect.any(String),
        line: line('version:'),
        brickId: null,
      },
      {
        severity: 'error',
        code: 'params.secret_default',
        message: expect.any(String),
        line: line('SECRET-DEFAULT'),
        brickId: null,
      },
      {
        severity: 'error',
        code: 'naming.missing_namespace',
        message: expect.any(String),
        line: line('service:role'),
        brickId: 'agents',
      },
      {
        severity: 'error',
        code: 'brick.unknown_dependency',
        message: expect.stringContaining('ghost'),
        line: line('service:nav'),
        brickId: 'menu',
      },
    ])
    expect(reply.body.data.blueprint).toMatchObject({ id: 'help-desk', version: null })
    expect(reply.text).not.toContain('SECRET-DEFAULT-VALUE')
  })

  it('a document that is not a blueprint at all is still 200, ok false', async () => {
    const reply = await validate({ source: '' })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toEqual({
      ok: false,
      diagnostics: [expect.objectContaining({ code: 'envelope.missing', line: 1 })],
      blueprint: { id: null, name: null, version: null, publisher: null, params: [], assemblies: [] },
      bricks: [],
    })
  })

  it('an archive gives the same answer as the document it carries', async () => {
    const reply = await validate({ archive: zipBase64({ 'desk/help-desk.ebp.md': utf8(helpDesk) }) })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ data: expectedHelpDesk })
  })
})

describe('POST /api/v1/blueprints/validate: hostile documents are diagnostics, never a 500', () => {
  const header = '---\nformat: service-blueprint-v1\n'
  const laughs = Array.from(
    { length: 10 },
    (_, i) =>
      `l${i}: &l${i} [${Array(9)
        .fill(i ? `*l${i - 1}` : '"lol"')
        .join(',')}]`,
  )
  it.each([
    ['a YAML alias bomb', `${header}${laughs.join('\n')}\n---\n`, 'envelope.unsupported_syntax'],
    ['front matter nested 500,000 deep', `${header}x: ${'['.repeat(500_000)}\n---\n`, 'envelope.too_large'],
    ['deep flow nesting within the size cap', `${header}x: ${'{a: '.repeat(10_000)}\n---\n`, 'envelope.invalid_yaml'],
    [
      'a brick body nested 900,000 deep',
      `${helpDesk}\n\`\`\`service:view id=deep\n${'['.repeat(900_000)}\n\`\`\`\n`,
      'brick.invalid_json',
    ],
    [
      '20,000 bricks needing themselves',
      `${helpDesk}\n${Array.from({ length: 20_000 }, (_, i) => `\`\`\`service:view id=v${i} needs=v${i}\n{}\n\`\`\``).join('\n')}`,
      'brick.dependency_cycle',
    ],
  ])('%s', async (_, source, code) => {
    const reply = await validate({ source })
    expect(reply.status, reply.text.slice(0, 300)).toBe(200)
    expect(reply.body.data.ok).toBe(false)
    expect(reply.body.data.diagnostics.map((d: { code: string }) => d.code)).toContain(code)
    expect(reply.body.data.diagnostics.length).toBeLessThanOrEqual(1001)
  })
})

describe('POST /api/v1/blueprints/validate: bad requests', () => {
  it.each([
    ['neither source nor archive', {}, 'exactly one|source is required'],
    [
      'both source and archive',
      { source: helpDesk, archive: zipBase64({ 'a.ebp.md': utf8(helpDesk) }) },
      'exactly one',
    ],
    ['a source that is not a string', { source: 42 }, 'body.source'],
    ['a source that is null', { source: null }, 'body.source'],
    ['an archive that is not a string', { archive: ['x'] }, 'body.archive'],
    ['an unknown key', { source: helpDesk, params: {} }, 'params'],
  ])('400 invalid_request: %s', async (_, body, message) => {
    const reply = await validate(body)
    refused(reply, 400, 'invalid_request')
    expect(reply.body.message).toMatch(new RegExp(message))
  })

  it('400 for a body that is not JSON', async () => {
    const reply = await server.request('POST', PATH, {
      token: nobody.token,
      rawBody: '{"source": ',
      headers: { 'content-type': 'application/json' },
    })
    refused(reply, 400, 'invalid_request')
  })

  it('413 for a source over 1,000,000 bytes, counted in UTF-8 (1,000,000 exactly is read)', async () => {
    refused(await validate({ source: 'x'.repeat(1_000_001) }), 413, 'payload_too_large')
    // 333,334 euro signs: fewer than a million characters, but 1,000,002 bytes.
    const euros = await validate({ source: '€'.repeat(333_334) })
    refused(euros, 413, 'payload_too_large')
    expect(euros.body.details).toMatchObject({ limit: 1_000_000 })
    const exact = await validate({ source: `${helpDesk}${' '.repeat(1_000_000 - Buffer.byteLength(helpDesk))}` })
    expect(exact.status, exact.text).toBe(200)
    expect(exact.body.data.ok).toBe(true)
  })
})

describe('POST /api/v1/blueprints/validate: archives refused', () => {
  const doc = utf8(helpDesk)
  const cases: [string, () => string][] = [
    ['archive.invalid_base64', () => '%%% not base64 %%%'],
    ['archive.not_a_zip', () => Buffer.from(helpDesk).toString('base64')],
    ['archive.unreadable', () => Buffer.from(zipBytes({ 'a.ebp.md': doc }).subarray(0, 64)).toString('base64')],
    ['archive.too_large', () => Buffer.alloc(4_000_001, 0x50).toString('base64')],
    [
      'archive.too_many_members',
      () => zipBase64(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`d${i}/`, new Uint8Array(0)]))),
    ],
    ['archive.unsafe_member_name', () => zipBase64({ '../../etc/a.ebp.md': doc })],
    ['archive.nested_archive', () => zipBase64({ 'a.ebp.md': doc, 'old.zip': zipBytes({ 'x.txt': utf8('x') }) })],
    ['archive.member_too_large', () => zipBase64({ 'a.ebp.md': new Uint8Array(1_000_001).fill(0x20) })],
    ['archive.no_document', () => zipBase64({ 'readme.md': doc })],
    ['archive.multiple_documents', () => zipBase64({ 'a.ebp.md': doc, 'b/c.ebp.md': doc })],
    [
      'archive.unexpected_member',
      () => zipBase64({ 'a.ebp.md': doc, 'logo.png': new Uint8Array([0x89, 0x50, 0x4e, 0x47]) }),
    ],
    ['archive.empty_document', () => zipBase64({ 'a.ebp.md': new Uint8Array(0) })],
    ['archive.not_utf8', () => zipBase64({ 'a.ebp.md': new Uint8Array([0xc3, 0x28]) })],
  ]

  it('the table below names every refusal of the spec', () => {
    expect(cases.map(([code]) => code).sort()).toEqual(Object.keys(archiveRefusals).sort())
  })

  it.each(cases)('%s', async (code, make) => {
    const status = archiveRefusals[code as keyof typeof archiveRefusals]
    const reply = await validate({ archive: make() })
    refused(reply, status, status === 413 ? 'payload_too_large' : 'invalid_request', code)
  })

  it('multiple documents and unexpected members are named', async () => {
    const multiple = await validate({ archive: zipBase64({ 'a.ebp.md': doc, 'b/c.ebp.md': doc }) })
    expect(multiple.body.details.members).toEqual(['a.ebp.md', 'b/c.ebp.md'])
    expect(multiple.body.message).toContain('"a.ebp.md" and "b/c.ebp.md"')
    const unexpected = await validate({ archive: zipBase64({ 'a.ebp.md': doc, 'logo.png': utf8('x') }) })
    expect(unexpected.body.details).toEqual({ code: 'archive.unexpected_member', member: 'logo.png' })
  })

  it('a zip bomb (1 GB declared as 1,000 bytes, about 1 MB on the wire) is 413 archive.member_too_large, memory bounded', async () => {
    const archive = await streamedZipBomb('help-desk.ebp.md', 1 << 30, 1000)
    expect(archive.length).toBeLessThan(2_000_000)
    const peakBefore = process.resourceUsage().maxRSS
    const reply = await validate({ archive })
    refused(reply, 413, 'payload_too_large', 'archive.member_too_large')
    expect(reply.body.details).toMatchObject({ member: 'help-desk.ebp.md', limit: 1_000_000 })
    // The server runs in this process: had it inflated the member, its peak would have grown by a gigabyte.
    const grownKb = process.resourceUsage().maxRSS - peakBefore
    expect(grownKb).toBeLessThan(200_000)
  })
})
