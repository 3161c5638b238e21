import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { accountWithGrants, uniqueName } from './collections-support.js'

/**
 * File containers (issue 29 item 5, decision 066) over real HTTP: CRUD under system/containers, the
 * refusals (401, 403, another project's id 404), definitions refused with 422 naming their path (another
 * project's storage connection among them), and the audit trail. Uploads into containers: containers-files.test.ts.
 */
const BASE = '/api/v1/containers'
let server: TestServer
let owner: Account
/** system/containers manage, and storage connections read (to name one). */
let manager: Account
/** The built-in viewer: system/containers read. */
let viewer: Account
/** No system/containers grant. */
let outsider: Account

const request = (
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  headers = {},
): Promise<Reply> => server.request(method, path, { token, body, headers })

function refused(reply: Reply, status: number, code: string): void {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.body).toMatchObject({ error: code, message: expect.any(String) })
}

async function create(body: Record<string, unknown>, token = manager.token): Promise<any> {
  const reply = await request('POST', BASE, token, { name: uniqueName('box'), ...body })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data
}

async function connection(headers: Record<string, string> = {}): Promise<string> {
  const reply = await request(
    'POST',
    '/api/v1/storage-connections',
    owner.token,
    {
      label: uniqueName('conn'),
      endpoint: 'https://s3.example.com',
      bucketName: 'some-bucket',
      accessKeyId: 'AKIAEXAMPLE',
      secretKey: 'secret-example',
    },
    headers,
  )
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data.id as string
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  manager = await accountWithGrants(server, owner.token, [
    { resource: 'system/containers', action: 'manage' },
    { resource: 'system/storage-connections', action: 'read' },
  ])
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
  outsider = await accountWithGrants(server, owner.token, [{ resource: 'system/files', action: 'read' }])
})
afterAll(async () => {
  await server?.stop()
})

describe('container CRUD', () => {
  it('creates with defaults, lists as a page, reads, changes and deletes', async () => {
    const made = await create({ name: 'Avatars', prefix: 'people/avatars', allowedTypes: ['image/*'] })
    expect(made).toEqual({
      id: expect.any(String),
      name: 'Avatars',
      storageConnectionId: null,
      bucketName: null,
      prefix: 'people/avatars',
      visibility: 'public',
      imageSizes: [],
      maxFileBytes: null,
      allowedTypes: ['image/*'],
      createdBy: manager.id,
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    })
    const listed = await request('GET', `${BASE}?limit=100`, viewer.token)
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body).toMatchObject({ total: expect.any(Number), page: 1, limit: 100, hasMore: false })
    expect(listed.body.data.map((c: any) => c.id)).toContain(made.id)
    expect((await request('GET', `${BASE}/${made.id}`, viewer.token)).body.data).toEqual(made)

    const patched = await request('PATCH', `${BASE}/${made.id}`, manager.token, {
      imageSizes: [{ name: 'small', size: 320 }],
      maxFileBytes: 2048,
      visibility: 'private',
    })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body.data).toMatchObject({
      name: 'Avatars',
      prefix: 'people/avatars',
      imageSizes: [{ name: 'small', size: 320 }],
      maxFileBytes: 2048,
      visibility: 'private',
    })
    expect((await request('DELETE', `${BASE}/${made.id}`, manager.token)).status).toBe(204)
    refused(await request('GET', `${BASE}/${made.id}`, viewer.token), 404, 'not_found')
    refused(await request('DELETE', `${BASE}/${made.id}`, manager.token), 404, 'not_found')
  })

  it('pages: limit 1 of two says hasMore', async () => {
    await create({})
    await create({})
    const first = await request('GET', `${BASE}?limit=1&page=1`, viewer.token)
    expect(first.body).toMatchObject({ page: 1, limit: 1, hasMore: true })
    expect(first.body.data).toHaveLength(1)
    expect(first.body.total).toBeGreaterThanOrEqual(2)
  })

  it('a second container of the same name is 409 already_exists', async () => {
    const name = uniqueName('twin')
    await create({ name })
    refused(await request('POST', BASE, manager.token, { name }), 409, 'already_exists')
  })

  it('names a storage connection of the project, and a bucket only with one', async () => {
    const id = await connection()
    const made = await create({ storageConnectionId: id, bucketName: 'photos-bucket' })
    expect(made).toMatchObject({ storageConnectionId: id, bucketName: 'photos-bucket' })
  })
})

describe('refusals', () => {
  it('401 anonymous, 403 without system/containers (and for a viewer writing)', async () => {
    const made = await create({})
    refused(await request('GET', BASE, undefined), 401, 'unauthorized')
    refused(await request('POST', BASE, undefined, { name: 'x' }), 401, 'unauthorized')
    refused(await request('GET', BASE, outsider.token), 403, 'forbidden')
    refused(await request('GET', `${BASE}/${made.id}`, outsider.token), 403, 'forbidden')
    refused(await request('POST', BASE, viewer.token, { name: 'mine' }), 403, 'forbidden')
    refused(await request('PATCH', `${BASE}/${made.id}`, viewer.token, { name: 'mine' }), 403, 'forbidden')
    refused(await request('DELETE', `${BASE}/${made.id}`, viewer.token), 403, 'forbidden')
    expect((await request('GET', `${BASE}/${made.id}`, viewer.token)).status).toBe(200)
  })

  it("another project's container is 404 everywhere and absent from the list; nothing of it changes", async () => {
    const project = await request('POST', '/api/v1/projects', owner.token, { name: uniqueName('elsewhere') })
    expect(project.status, project.text).toBe(201)
    const there = { 'X-Project-Id': project.body.data.id as string }
    const theirs = await request('POST', BASE, owner.token, { name: 'theirs', prefix: 'secret' }, there)
    expect(theirs.status, theirs.text).toBe(201)
    const id = theirs.body.data.id as string
    const admin = await createAccount(server, owner.token, { role: 'admin' })
    for (const token of [owner.token, admin.token]) {
      const listed = await request('GET', `${BASE}?limit=100`, token)
      expect(listed.body.data.map((c: any) => c.id)).not.toContain(id)
      refused(await request('GET', `${BASE}/${id}`, token), 404, 'not_found')
      refused(await request('PATCH', `${BASE}/${id}`, token, { prefix: 'hijacked' }), 404, 'not_found')
      refused(await request('DELETE', `${BASE}/${id}`, token), 404, 'not_found')
    }
    expect((await request('GET', `${BASE}/${id}`, owner.token, undefined, there)).body.data).toEqual(theirs.body.data)
  })
})

describe('validation: 422 naming the path', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['a size below the floor', { imageSizes: [{ name: 'tiny', size: 2 }] }, 'imageSizes[0].size'],
    [
      'a fractional size',
      {
        imageSizes: [
          { name: 'a', size: 100 },
          { name: 'b', size: 100.5 },
        ],
      },
      'imageSizes[1].size',
    ],
    ['a size named thumbnail', { imageSizes: [{ name: 'thumbnail', size: 100 }] }, 'imageSizes[0].name'],
    [
      'a size named twice',
      {
        imageSizes: [
          { name: 'a', size: 100 },
          { name: 'a', size: 200 },
        ],
      },
      'imageSizes[1].name',
    ],
    ['a negative maxFileBytes', { maxFileBytes: -1 }, 'maxFileBytes'],
    ['a maxFileBytes past 100 MB', { maxFileBytes: 200 * 1024 * 1024 }, 'maxFileBytes'],
    ['a prefix climbing out', { prefix: '../other-project' }, 'prefix'],
    ['a prefix with a leading slash', { prefix: '/abs' }, 'prefix'],
    ['a type that is no media type', { allowedTypes: ['image/png', 'png'] }, 'allowedTypes[1]'],
    ['a bucket without a connection', { bucketName: 'some-bucket' }, 'bucketName'],
    ['an empty name', { name: '  ' }, 'name'],
    ['an unknown storage connection', { storageConnectionId: 'nope' }, 'storageConnectionId'],
  ]
  for (const [what, body, at] of cases) {
    it(`${what} → ${at}`, async () => {
      const reply = await request('POST', BASE, manager.token, { name: uniqueName('bad'), ...body })
      refused(reply, 422, 'validation_error')
      expect(reply.body.details.at).toBe(at)
    })
  }

  it('a change is checked merged over the stored definition', async () => {
    const made = await create({ imageSizes: [{ name: 'small', size: 320 }] })
    const reply = await request('PATCH', `${BASE}/${made.id}`, manager.token, { maxFileBytes: -5 })
    refused(reply, 422, 'validation_error')
    expect(reply.body.details.at).toBe('maxFileBytes')
    expect((await request('GET', `${BASE}/${made.id}`, manager.token)).body.data).toEqual(made)
  })

  it("another project's storage connection is 422 naming storageConnectionId, on create and on change", async () => {
    const project = await request('POST', '/api/v1/projects', owner.token, { name: uniqueName('conns') })
    expect(project.status, project.text).toBe(201)
    const theirs = await connection({ 'X-Project-Id': project.body.data.id as string })
    for (const token of [manager.token, owner.token]) {
      const created = await request('POST', BASE, token, { name: uniqueName('steal'), storageConnectionId: theirs })
      refused(created, 422, 'validation_error')
      expect(created.body.details.at).toBe('storageConnectionId')
      const made = await create({}, token)
      const changed = await request('PATCH', `${BASE}/${made.id}`, token, { storageConnectionId: theirs })
      refused(changed, 422, 'validation_error')
      expect(changed.body.details.at).toBe('storageConnectionId')
      expect((await request('GET', `${BASE}/${made.id}`, token)).body.data.storageConnectionId).toBeNull()
    }
  })

  it('a structurally wrong body is 400 invalid_request (not a 500)', async () => {
    refused(await request('POST', BASE, manager.token, { name: 'x', imageSizes: 'big' }), 400, 'invalid_request')
    refused(await request('POST', BASE, manager.token, { name: 'x', surprise: true }), 400, 'invalid_request')
  })
})

describe('audit', () => {
  it('create, update and delete are recorded', async () => {
    const made = await create({ name: uniqueName('audited') })
    await request('PATCH', `${BASE}/${made.id}`, manager.token, { prefix: 'a/b' })
    await request('DELETE', `${BASE}/${made.id}`, manager.token)
    for (const action of ['container.created', 'container.updated', 'container.deleted']) {
      const reply = await request('GET', `/api/v1/audit-log?action=${action}&limit=100`, owner.token)
      expect(reply.status, reply.text).toBe(200)
      const mine = (reply.body.data as { target: { id: string } | null }[]).filter((e) => e.target?.id === made.id)
      expect(mine, action).toHaveLength(1)
    }
  })
})
