import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeOpenAi, type FakeProvider } from '../../src/lib/ai/fake-servers.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, setGrants, signUpOwner, type Account } from '../support/identity.js'
import { activeFlow, executeToEnd, type Call } from './automate-support.js'

/**
 * Security review (issue 25, deliver 5): the file operations of flows (file_read, file_upload,
 * file_transform, render_lens_template's saveToR2, ai_image) attacked by a low role over HTTP. Mallory holds a
 * custom role: system/files read and create, update only on her own uploads, system/automate read and
 * execute, a lens and the collection it reads; flows the owner published run as her (triggering_user).
 * - keys that are not file handles (traversal in every spelling, NUL, control characters, very long,
 *   unicode look-alikes) are invalid_request before anything is read or written, and nothing lands on disk
 *   outside DATA_DIR (nor anything with the attack's marker inside it);
 * - project B's files (by id, r2Key, a forged r2Key, a flow key) are not_found from project A, also for
 *   the super_admin acting in A; a flow key B uses is A's own key in A;
 * - another user's files: private ones not_found, public ones forbidden to overwrite (her grant reaches her
 *   own uploads only), by id, r2Key, flow key, transform destination and lens r2Key.
 * Variants are off (edge_cache_only) so the stored objects change only by what the flows do.
 */
const MARK = `pwn${randomBytes(5).toString('hex')}`
const CONTENT = `attack-${MARK}`
let server: TestServer
let ai: FakeProvider
let owner: Account
let mallory: Account
let victim: Account
let bId: string
const flows: Record<'read' | 'upload' | 'transform' | 'lens' | 'image', string> = {
  read: '',
  upload: '',
  transform: '',
  lens: '',
  image: '',
}
/** Files of project B (the owner's, uploaded there), of the victim in A, and mallory's own png. */
const b: Record<'pub' | 'priv' | 'keyed', any> = { pub: null, priv: null, keyed: null }
const v: Record<'pub' | 'priv' | 'keyed', any> = { pub: null, priv: null, keyed: null }
let ownPng: any

const as =
  (token: string, projectId?: string): Call =>
  (method, path, body) =>
    server.request(method, path, { token, body, headers: projectId ? { 'X-Project-Id': projectId } : {} })
/** Runs the flow of A as `account` (the run acts as them) and answers the finished run. */
const runAs = (account: Account, flowId: string, body: Record<string, unknown>) =>
  executeToEnd(as(account.token), as(owner.token), flowId, body)
const stepOf = (run: any, key: string) => run.stepLogs.find((s: any) => s.key === key)

async function upload(
  token: string,
  filename: string,
  type: string,
  bytes: Buffer,
  visibility: string,
  projectId?: string,
): Promise<any> {
  const form = new FormData()
  form.set('visibility', visibility)
  form.set('file', new Blob([bytes], { type }), filename)
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    ...(projectId ? { 'X-Project-Id': projectId } : {}),
  }
  const res = await fetch(`${server.url}/api/v1/files/upload`, { method: 'POST', headers, body: form })
  const body = (await res.json()) as any
  expect(res.status, JSON.stringify(body)).toBe(201)
  return body.data
}

/** Every file row of both projects (as the owner, who sees all) with its bytes' hash, and every stored object. */
async function snapshot(): Promise<{ rows: string[]; objects: string[] }> {
  const rows: string[] = []
  for (const headers of [{}, { 'X-Project-Id': bId }] as Record<string, string>[]) {
    const reply = await server.request('GET', '/api/v1/files?limit=100', { token: owner.token, headers })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.hasMore).toBe(false)
    for (const f of reply.body.data)
      rows.push(`${f.projectId} ${f.id} ${f.sha256} ${f.sizeBytes} ${f.flowKey} ${f.uploadedBy} ${f.r2Key}`)
  }
  return { rows: rows.sort(), objects: [...(await server.app.storage.list('projects/', 1000))].sort() }
}

/** Every file and folder under `dir`, recursively. */
function walk(dir: string): { path: string; folder: boolean }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? [{ path, folder: true }, ...walk(path)] : [{ path, folder: false }]
  })
}

/**
 * Nothing outside DATA_DIR bears the marker (where a traversal would land: the temp folder DATA_DIR is in,
 * the working directory, the root); inside it no name does, and no stored object, type or unfinished
 * upload holds the refused content (the database does: the step logs record what was sent).
 */
function assertNothingOnDisk(): void {
  for (const dir of [tmpdir(), resolve(server.dataDir, '..'), process.cwd(), '/']) {
    expect(
      readdirSync(dir).filter((name) => name.includes(MARK)),
      dir,
    ).toEqual([])
  }
  expect(walk(server.dataDir).filter(({ path }) => path.includes(MARK))).toEqual([])
  const stored = ['files', 'files-meta', 'files-tmp'].flatMap((dir) =>
    existsSync(join(server.dataDir, dir)) ? walk(join(server.dataDir, dir)) : [],
  )
  expect(
    stored.filter(({ path, folder }) => !folder && readFileSync(path).includes(CONTENT)).map(({ path }) => path),
  ).toEqual([])
}

beforeAll(async () => {
  ai = await startFakeOpenAi(null)
  server = await startServer({
    OPENAI_BASE_URL: ai.baseUrl,
    OPENAI_API_KEY: 'sk-fake',
    OPENAI_MODEL: 'm',
    OPENAI_IMAGE_MODEL: 'sdxl',
  })
  owner = await signUpOwner(server)
  const project = await server.request('POST', '/api/v1/projects', { token: owner.token, body: { name: 'Project B' } })
  expect(project.status, project.text).toBe(201)
  bId = project.body.data.id
  for (const headers of [{}, { 'X-Project-Id': bId }] as Record<string, string>[]) {
    const settings = await server.request('PATCH', '/api/v1/settings', {
      token: owner.token,
      headers,
      body: { 'files.strategy': 'edge_cache_only' },
    })
    expect(settings.status, settings.text).toBe(200)
  }
  // A collection and a published lens mallory may render.
  const collection = await as(owner.token)('POST', '/api/v1/collections', {
    name: 'orders',
    fields: [{ name: 'title', type: 'text', required: true }],
  })
  expect(collection.status, collection.text).toBe(201)
  expect((await as(owner.token)('POST', '/api/v1/collections/orders/records', { title: 'Widget' })).status).toBe(201)
  const lens = await as(owner.token)('POST', '/api/v1/lenses', {
    collection: 'orders',
    name: 'Orders',
    fields: ['title'],
  })
  expect(lens.status, lens.text).toBe(201)
  expect(
    (await as(owner.token)('POST', `/api/v1/lenses/${lens.body.data.id}/publish`, { changeSummary: 'v1' })).status,
  ).toBe(200)

  const own = { uploadedBy: { _eq: '$CURRENT_USER' } }
  const role = await as(owner.token)('POST', '/api/v1/roles', { name: 'filer' })
  expect(role.status, role.text).toBe(201)
  await setGrants(server, owner.token, 'filer', [
    { resource: 'system/files', action: 'read' },
    { resource: 'system/files', action: 'create' },
    { resource: 'system/files', action: 'update', item_filter: own },
    { resource: 'system/files', action: 'delete', item_filter: own },
    { resource: 'system/automate', action: 'read' },
    { resource: 'system/automate', action: 'execute' },
    { resource: 'system/lenses', action: 'read' },
    { resource: 'collections/orders', action: 'read' },
  ])
  mallory = await createAccount(server, owner.token, { role: 'filer' })
  victim = await createAccount(server, owner.token, { role: 'filer' })

  const owned = as(owner.token)
  flows.read = await activeFlow(owned, 'read', [
    { key: 'op', type: 'file_read', config: { key: '{{$trigger.body.key}}' } },
  ])
  flows.upload = await activeFlow(owned, 'upload', [
    {
      key: 'op',
      type: 'file_upload',
      config: { key: '{{$trigger.body.key}}', content: '{{$trigger.body.content}}', contentType: 'text/plain' },
    },
  ])
  const webp = [{ type: 'format', format: 'webp' }]
  flows.transform = await activeFlow(owned, 'transform', [
    {
      key: 'op',
      type: 'file_transform',
      config: { sourceKey: '{{$trigger.body.source}}', destKey: '{{$trigger.body.key}}', operations: webp },
    },
  ])
  flows.lens = await activeFlow(owned, 'lens', [
    {
      key: 'op',
      type: 'render_lens_template',
      config: { templateId: lens.body.data.id, format: 'csv', saveToR2: true, r2Key: '{{$trigger.body.key}}' },
    },
  ])
  flows.image = await activeFlow(owned, 'image', [{ key: 'op', type: 'ai_image', config: { prompt: 'a fox' } }])

  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 1, g: 2, b: 3 } } })
    .png()
    .toBuffer()
  ownPng = await upload(mallory.token, 'mine.png', 'image/png', png, 'public')
  b.pub = await upload(owner.token, 'board.png', 'image/png', png, 'public', bId)
  b.priv = await upload(owner.token, 'salaries.txt', 'text/plain', Buffer.from('B private'), 'private', bId)
  v.pub = await upload(victim.token, 'notice.png', 'image/png', png, 'public')
  v.priv = await upload(victim.token, 'diary.txt', 'text/plain', Buffer.from('victim private'), 'private')
  // Files at flow keys: B's written by a flow run in B, the victim's by a run acting as the victim.
  const inB = await activeFlow(as(owner.token, bId), 'B writer', [
    {
      key: 'op',
      type: 'file_upload',
      config: { key: 'shared/board.csv', content: 'B keyed', contentType: 'text/csv' },
    },
  ])
  b.keyed = stepOf(await executeToEnd(as(owner.token, bId), as(owner.token, bId), inB, {}), 'op').output
  expect(b.keyed).toMatchObject({ replaced: false })
  v.keyed = stepOf(await runAs(victim, flows.upload, { key: 'victim/notes.txt', content: 'victim keyed' }), 'op').output
  expect(v.keyed).toMatchObject({ replaced: false })
})
afterAll(async () => {
  await server?.stop()
  await ai?.close()
})

/** The body each flow of `flows` gets with `key` as its attacked key (the transform's destination; its source is mallory's own png). */
const bodyFor = (op: keyof typeof flows, key: string) =>
  op === 'transform' ? { source: ownPng.id, key } : { key, content: CONTENT }

describe('a key that is not a file handle is refused before anything is read or written', () => {
  const long = 'a'.repeat(501)
  const keys = [
    ['../x.txt'],
    [`../../../../../../../tmp/${MARK}.txt`],
    [`a/../../${MARK}.txt`],
    ['..'],
    ['.'],
    [`./${MARK}.txt`],
    ['a/./b.txt'],
    [`..\\..\\${MARK}.txt`],
    ['a\\b.txt'],
    [`C:\\${MARK}.txt`],
    [`/tmp/${MARK}.txt`],
    ['/etc/passwd'],
    [`//${MARK}.txt`],
    ['a//b.txt'],
    ['reports/'],
    [`%2e%2e/${MARK}.txt`],
    [`%2e%2e%2f${MARK}.txt`],
    [`..%2f${MARK}.txt`],
    [`%252e%252e/${MARK}.txt`],
    [`${MARK}\u0000.txt`],
    ['a/\u0000/b'],
    [`${MARK}.txt\u0000.png`],
    ['a\nb.txt'],
    ['a\r\nb'],
    ['\u001b[2J'],
    [long],
    [Array(21).fill('a').join('/')],
    ['a'.repeat(121)],
    [`．．/${MARK}.txt`],
    [`‥/${MARK}.txt`],
    [`ｒｅｐｏｒｔｓ/${MARK}.txt`],
    ['e\u0301.txt'],
    [`${MARK}\u202e.txt`],
    [`../${MARK}.txt`],
    [` ../${MARK}.txt`],
    [`${MARK}.txt `],
    [`projects/x/files/../../../${MARK}.txt`],
  ].map(([key]) => [
    key!.length > 60
      ? `${JSON.stringify(key!.slice(0, 12))}… (${key!.length} characters, ${key!.split('/').length} segments)`
      : JSON.stringify(key),
    key!,
  ])
  it.each(keys)(
    "%s: invalid_request for file_read, file_upload, file_transform's source and destination, render_lens_template's r2Key",
    async (_label, key) => {
      const before = await snapshot()
      const attempts: [keyof typeof flows, Record<string, unknown>][] = [
        ['read', { key }],
        ['upload', { key, content: CONTENT }],
        ['transform', { source: key, key: '' }],
        ['transform', { source: ownPng.id, key }],
        ['lens', { key }],
      ]
      for (const [op, body] of attempts) {
        const run = await runAs(mallory, flows[op], body)
        expect(run.status, `${op} ${JSON.stringify(body)}`).toBe('failed')
        expect(run.error, `${op} ${JSON.stringify(body)}`).toMatchObject({
          code: 'invalid_request',
          step: 'op',
          message: expect.stringMatching(/^key: a file id, a file's r2Key, or a relative path/),
        })
        expect(JSON.stringify(run)).not.toContain('root:x:0:0')
      }
      expect(await snapshot()).toEqual(before)
      assertNothingOnDisk()
    },
  )

  it("a key longer than any key (over 1024 characters) is refused by the step's config (invalid_config), nothing stored", async () => {
    const before = await snapshot()
    for (const op of ['read', 'upload', 'transform', 'lens'] as const) {
      const run = await runAs(mallory, flows[op], bodyFor(op, `${'../'.repeat(400)}${MARK}`))
      expect(run.error, op).toMatchObject({ code: 'invalid_config', step: 'op' })
    }
    expect(await snapshot()).toEqual(before)
    assertNothingOnDisk()
  })

  it("the same flows with a fair key write inside DATA_DIR, under A's prefix, at the file's own id (the control)", async () => {
    const written: any[] = []
    for (const op of ['upload', 'transform', 'lens'] as const) {
      const run = await runAs(
        mallory,
        flows[op],
        op === 'upload' ? { key: `mallory/.../${op}.txt`, content: 'fair' } : bodyFor(op, `mallory/${op}-out`),
      )
      expect(run.status, `${op} ${JSON.stringify(run.error)}`).toBe('completed')
      written.push(stepOf(run, 'op').output.file ?? stepOf(run, 'op').output)
    }
    const image = await runAs(mallory, flows.image, {})
    expect(image.status, JSON.stringify(image.error)).toBe('completed')
    written.push(stepOf(image, 'op').output.file)
    const project = server.app.defaultProject.id
    for (const file of written) {
      expect(file.key ?? file.r2Key).toMatch(
        new RegExp(`^projects/${project}/files/${file.id}/([0-9a-f]{12}/)?[A-Za-z0-9._-]+$`),
      )
      const meta = await server.request('GET', `/api/v1/files/${file.id}`, { token: mallory.token })
      expect(meta.body.data).toMatchObject({ projectId: project, uploadedBy: mallory.id })
      expect(existsSync(join(server.dataDir, 'files', file.key ?? file.r2Key))).toBe(true)
    }
  })
})

describe("project B's files are missing from project A", () => {
  it.each([
    ["file_read of B's public file by id", 'not_found', 'read', () => ({ key: b.pub.id })],
    ["file_read of B's private file by id", 'not_found', 'read', () => ({ key: b.priv.id })],
    ["file_read of B's file by its r2Key", 'not_found', 'read', () => ({ key: b.pub.r2Key })],
    [
      "file_read of B's file by a forged r2Key under A's prefix",
      'not_found',
      'read',
      () => ({ key: b.pub.r2Key.replace(bId, server.app.defaultProject.id) }),
    ],
    ["file_read of B's flow key", 'not_found', 'read', () => ({ key: 'shared/board.csv' })],
    ["file_upload over B's file by id", 'not_found', 'upload', () => ({ key: b.pub.id, content: CONTENT })],
    ["file_upload over B's file by r2Key", 'not_found', 'upload', () => ({ key: b.keyed.key, content: CONTENT })],
    ["file_transform of B's file", 'not_found', 'transform', () => ({ source: b.pub.id, key: '' })],
    ["file_transform into B's file", 'not_found', 'transform', () => ({ source: ownPng.id, key: b.pub.id })],
    ["render_lens_template saved over B's file", 'not_found', 'lens', () => ({ key: b.priv.r2Key })],
  ] as const)('%s: %s for mallory and for the super_admin acting in A; B unchanged', async (_name, code, op, body) => {
    const before = await snapshot()
    for (const account of [mallory, owner]) {
      const run = await runAs(account, flows[op], body())
      expect(run.status).toBe('failed')
      expect(run.error, account.email).toMatchObject({ code, step: 'op' })
      expect(JSON.stringify(run)).not.toMatch(/B private|B keyed/)
    }
    expect(await snapshot()).toEqual(before)
  })

  it("a flow key B uses names A's own file in A: writing there makes one in A and leaves B's as it was", async () => {
    const before = await snapshot()
    const run = await runAs(mallory, flows.upload, { key: 'shared/board.csv', content: 'A board' })
    expect(run.status, JSON.stringify(run.error)).toBe('completed')
    const made = stepOf(run, 'op').output
    expect(made).toMatchObject({ replaced: false })
    expect(made.id).not.toBe(b.keyed.id)
    expect(made.key).toMatch(new RegExp(`^projects/${server.app.defaultProject.id}/`))
    const after = await snapshot()
    expect(after.rows.filter((row) => !before.rows.includes(row))).toHaveLength(1)
    expect(before.rows.filter((row) => !after.rows.includes(row))).toEqual([])
  })
})

describe("another user's files, when the grant reaches one's own uploads only", () => {
  it.each([
    ["file_read of the victim's private file by id", 'not_found', 'read', () => ({ key: v.priv.id })],
    ["file_read of the victim's private file by r2Key", 'not_found', 'read', () => ({ key: v.priv.r2Key })],
    ["file_transform of the victim's private file", 'not_found', 'transform', () => ({ source: v.priv.id, key: '' })],
    [
      "file_upload over the victim's public file by id",
      'forbidden',
      'upload',
      () => ({ key: v.pub.id, content: CONTENT }),
    ],
    [
      "file_upload over the victim's public file by r2Key",
      'forbidden',
      'upload',
      () => ({ key: v.pub.r2Key, content: CONTENT }),
    ],
    [
      "file_upload at the victim's flow key",
      'forbidden',
      'upload',
      () => ({ key: 'victim/notes.txt', content: CONTENT }),
    ],
    [
      "file_transform into the victim's public file",
      'forbidden',
      'transform',
      () => ({ source: ownPng.id, key: v.pub.id }),
    ],
    [
      "file_transform at the victim's flow key",
      'forbidden',
      'transform',
      () => ({ source: ownPng.id, key: 'victim/notes.txt' }),
    ],
    ["render_lens_template saved over the victim's public file", 'forbidden', 'lens', () => ({ key: v.pub.id })],
    ["render_lens_template saved at the victim's flow key", 'forbidden', 'lens', () => ({ key: 'victim/notes.txt' })],
  ] as const)('%s: %s, nothing changes', async (_name, code, op, body) => {
    const before = await snapshot()
    const run = await runAs(mallory, flows[op], body())
    expect(run.status).toBe('failed')
    expect(run.error).toMatchObject({ code, step: 'op' })
    expect(JSON.stringify(run)).not.toContain('victim private')
    expect(await snapshot()).toEqual(before)
  })

  it("the same flow replaces mallory's own upload (the control: the refusals are the grant's row scope)", async () => {
    const mine = await upload(mallory.token, 'mine.txt', 'text/plain', Buffer.from('mine'), 'public')
    const run = await runAs(mallory, flows.upload, { key: mine.id, content: 'replaced by me' })
    expect(run.status, JSON.stringify(run.error)).toBe('completed')
    expect(stepOf(run, 'op').output).toMatchObject({
      id: mine.id,
      replaced: true,
      sha256: createHash('sha256').update('replaced by me').digest('hex'),
    })
  })
})
