import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'

// Record shares (addendum §4) on a private collection with sharing on: who may manage them, what each
// level opens, and that a removed share closes access on the very next request.

let server: TestServer
let owner: Account
let admin: Account
/** Holds read/create/update/delete on docs: owns what they create, sees nothing else. */
let alice: Account
let bob: Account
/** Holds no grant at all. */
let carol: Account
let stranger: { id: string; email: string }
let nearDesk: string

const DOCS = '/api/v1/collections/docs/records'
const call = (
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> => server.request(method, path, { token, body, headers })
const sharesOf = (id: string, collection = 'docs') => `/api/v1/collections/${collection}/records/${id}/shares`

let seq = 0
async function personWith(grants: unknown[]): Promise<Account> {
  const name = `share_role_${seq++}`
  const role = await call('POST', '/api/v1/roles', owner.token, { name })
  expect(role.status, role.text).toBe(201)
  const put = await call('PUT', `/api/v1/roles/${role.body.data.id}/grants`, owner.token, { grants })
  expect(put.status, put.text).toBe(200)
  return createAccount(server, owner.token, { role: name })
}

async function newDoc(title: string, token = alice.token, collection = 'docs'): Promise<string> {
  const reply = await call('POST', `/api/v1/collections/${collection}/records`, token, { title })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.id
}

async function share(id: string, body: Record<string, unknown>, token = alice.token): Promise<Record<string, any>> {
  const reply = await call('POST', sharesOf(id), token, body)
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data
}

async function listShares(id: string): Promise<Record<string, any>[]> {
  const reply = await call('GET', sharesOf(id), owner.token)
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

async function stored(id: string): Promise<Record<string, any> | null> {
  const reply = await call('GET', `${DOCS}/${id}?include_deleted=true`, owner.token)
  if (reply.status === 404) return null
  return reply.body.data
}

const crud = (name: string) =>
  ['read', 'create', 'update', 'delete'].map((action) => ({ resource: `collections/${name}`, action }))

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
  for (const [name, accessControl] of [
    ['docs', { preset: 'private', sharing: true }],
    ['sealed', { preset: 'private' }],
    ['boards', { preset: 'team', sharing: true }],
  ] as const) {
    const reply = await call('POST', '/api/v1/collections', owner.token, {
      name,
      fields: [{ name: 'title', type: 'text', required: true }],
      accessControl,
    })
    expect(reply.status, reply.text).toBe(201)
  }
  alice = await personWith([...crud('docs'), ...crud('sealed'), ...crud('boards')])
  bob = await personWith([...crud('docs'), ...crud('sealed')])
  carol = await personWith([])

  // Someone in another project: a share with them must fail exactly like one with nobody.
  const project = await call('POST', '/api/v1/projects', owner.token, { name: 'Other place' })
  expect(project.status, project.text).toBe(201)
  const email = 'stranger@example.com'
  const made = await call(
    'POST',
    '/api/v1/users',
    owner.token,
    { email, password: 'a good password', name: 'Stranger', role: 'viewer' },
    { 'X-Project-Id': project.body.data.id },
  )
  expect(made.status, made.text).toBe(201)
  stranger = { id: made.body.data.id, email }
  // A shared contact address: accounts that sign in by username may share one, here across projects.
  const desk = { email: 'desk@example.com', password: 'a good password', role: 'viewer' }
  const far = await call(
    'POST',
    '/api/v1/users',
    owner.token,
    { ...desk, name: 'Far desk', username: 'far_desk' },
    { 'X-Project-Id': project.body.data.id },
  )
  expect(far.status, far.text).toBe(201)
  const near = await call('POST', '/api/v1/users', owner.token, { ...desk, name: 'Near desk', username: 'near_desk' })
  expect(near.status, near.text).toBe(201)
  nearDesk = near.body.data.id
})
afterAll(async () => {
  await server?.stop()
})

describe('managing shares as the owner', () => {
  it('a record starts with no shares; sharing by userId answers the share and lists it', async () => {
    const id = await newDoc('plan')
    expect(await listShares(id)).toEqual([])
    const own = await call('GET', sharesOf(id), alice.token)
    expect(own.status, own.text).toBe(200)
    expect(own.body).toEqual({ data: [] })

    const made = await share(id, { userId: carol.id, access: 'view' })
    expect(made).toEqual({
      id: expect.any(String),
      recordId: id,
      userId: carol.id,
      access: 'view',
      createdAt: expect.any(Number),
    })
    const listed = await call('GET', sharesOf(id), alice.token)
    expect(listed.body).toEqual({ data: [made] })
  })

  it('sharing by email works, matched case-insensitively', async () => {
    const id = await newDoc('by email')
    const made = await share(id, { userEmail: carol.email.toUpperCase(), access: 'comment' })
    expect(made).toMatchObject({ recordId: id, userId: carol.id, access: 'comment' })
  })

  // Was a 404 (fixed in shares.ts): the address also belongs to an account of another project, and two
  // candidates counted as "not found" before the other project's one was set aside.
  it('sharing by an email that an account of another project also uses finds the person of this project', async () => {
    const id = await newDoc('for the desk')
    const made = await share(id, { userEmail: 'Desk@Example.com', access: 'view' })
    expect(made).toMatchObject({ recordId: id, userId: nearDesk, access: 'view' })
  })

  it('posting again for the same person changes the level; there is still one share', async () => {
    const id = await newDoc('relevel')
    const first = await share(id, { userId: carol.id, access: 'view' })
    const second = await share(id, { userEmail: carol.email, access: 'edit' })
    expect(second).toMatchObject({ id: first.id, userId: carol.id, access: 'edit' })
    expect((await listShares(id)).map((s) => [s.userId, s.access])).toEqual([[carol.id, 'edit']])
  })

  describe('refusals (nothing is stored)', () => {
    let id: string
    beforeAll(async () => {
      id = await newDoc('refusals')
    })

    it('400 unless exactly one of userId and userEmail', async () => {
      for (const body of [{ access: 'view' }, { userId: carol.id, userEmail: carol.email, access: 'view' }]) {
        const reply = await call('POST', sharesOf(id), alice.token, body)
        expect(reply.status, JSON.stringify(body)).toBe(400)
        expect(reply.body.error).toBe('invalid_request')
      }
      expect(await listShares(id)).toEqual([])
    })

    it('400 for an access level other than view, comment or edit', async () => {
      for (const access of ['admin', 'owner', '', undefined]) {
        const reply = await call('POST', sharesOf(id), alice.token, { userId: carol.id, access })
        expect(reply.status, String(access)).toBe(400)
        expect(reply.body.error).toBe('invalid_request')
      }
      expect(await listShares(id)).toEqual([])
    })

    it('an unknown person or a person of another project is 404 with one and the same message', async () => {
      const replies = [
        await call('POST', sharesOf(id), alice.token, { userId: 'a'.repeat(32), access: 'view' }),
        await call('POST', sharesOf(id), alice.token, { userEmail: 'nobody@example.com', access: 'view' }),
        await call('POST', sharesOf(id), alice.token, { userId: stranger.id, access: 'view' }),
        await call('POST', sharesOf(id), alice.token, { userEmail: stranger.email, access: 'view' }),
      ]
      for (const reply of replies) {
        expect(reply.status, reply.text).toBe(404)
        expect(reply.body).toEqual(replies[0]!.body)
      }
      expect(replies[0]!.body.error).toBe('not_found')
      expect(await listShares(id)).toEqual([])
    })

    // Was a 500 (fixed in shares.ts): an empty userId passed the exactly-one check, was then taken as
    // absent, and the person was looked up by an email that was never sent.
    it('an empty userId or userEmail is 400, never a server error', async () => {
      for (const body of [
        { userId: '', access: 'view' },
        { userEmail: '', access: 'view' },
        { userId: '', userEmail: carol.email, access: 'view' },
      ]) {
        const reply = await call('POST', sharesOf(id), alice.token, body)
        expect(reply.status, JSON.stringify(body)).toBe(400)
        expect(reply.body.error).toBe('invalid_request')
      }
      expect(await listShares(id)).toEqual([])
    })
  })

  it("an administrator manages shares of anyone's record", async () => {
    const id = await newDoc('admin managed')
    const made = await share(id, { userId: bob.id, access: 'view' }, admin.token)
    expect(made).toMatchObject({ userId: bob.id, access: 'view' })
    const listed = await call('GET', sharesOf(id), admin.token)
    expect(listed.status).toBe(200)
    expect(listed.body.data).toHaveLength(1)
    const removed = await call('DELETE', `${sharesOf(id)}/${made.id}`, admin.token)
    expect(removed.status, removed.text).toBe(200)
    expect(await listShares(id)).toEqual([])
  })
})

describe('who may not manage shares', () => {
  let id: string
  let shareId: string
  beforeAll(async () => {
    id = await newDoc('guarded')
    shareId = (await share(id, { userId: bob.id, access: 'edit' })).id
  })

  it('a non-owner who can see the record (here through an edit share) gets 403 on list, post and delete', async () => {
    const replies = [
      await call('GET', sharesOf(id), bob.token),
      await call('POST', sharesOf(id), bob.token, { userId: carol.id, access: 'edit' }),
      await call('DELETE', `${sharesOf(id)}/${shareId}`, bob.token),
    ]
    for (const reply of replies) {
      expect(reply.status, reply.text).toBe(403)
      expect(reply.body.error).toBe('forbidden')
    }
    expect((await listShares(id)).map((s) => [s.userId, s.access])).toEqual([[bob.id, 'edit']])
  })

  it('a non-owner who cannot see the record gets 404 (hidden means missing)', async () => {
    const other = await personWith(crud('docs'))
    for (const reply of [
      await call('GET', sharesOf(id), other.token),
      await call('POST', sharesOf(id), other.token, { userId: carol.id, access: 'view' }),
    ]) {
      expect(reply.status, reply.text).toBe(404)
      expect(reply.body.error).toBe('record_not_found')
    }
    expect(await listShares(id)).toHaveLength(1)
  })

  it('someone without any grant or share on the collection gets 403 naming collections/docs:read', async () => {
    const outsider = await personWith([])
    for (const reply of [
      await call('GET', sharesOf(id), outsider.token),
      await call('POST', sharesOf(id), outsider.token, { userId: outsider.id, access: 'edit' }),
    ]) {
      expect(reply.status, reply.text).toBe(403)
      expect(reply.body.message).toContain('collections/docs:read')
    }
    expect(await listShares(id)).toHaveLength(1)
  })

  it('anonymous callers get 401; a missing record 404', async () => {
    expect((await call('GET', sharesOf(id))).status).toBe(401)
    expect((await call('POST', sharesOf(id), undefined, { userId: carol.id, access: 'view' })).status).toBe(401)
    const missing = await call('GET', sharesOf('no_such_doc'), alice.token)
    expect(missing.status).toBe(404)
    expect(missing.body.error).toBe('record_not_found')
  })

  it('a share id of another record, or an unknown one, is 404 and removes nothing', async () => {
    const otherDoc = await newDoc('other guarded')
    for (const path of [`${sharesOf(otherDoc)}/${shareId}`, `${sharesOf(id)}/no_such_share`]) {
      const reply = await call('DELETE', path, alice.token)
      expect(reply.status, path).toBe(404)
      expect(reply.body.error).toBe('not_found')
    }
    expect(await listShares(id)).toHaveLength(1)
  })
})

describe('what a share opens', () => {
  it('view: the person reads the record without any role grant, lists only it, and cannot change it', async () => {
    // dave holds no grant and no share yet: the collection is simply not his (403).
    const dave = await personWith([])
    const id = await newDoc('for dave to see')
    await newDoc('not for dave')
    const before = await call('GET', `${DOCS}/${id}`, dave.token)
    expect(before.status).toBe(403)
    expect(before.body.message).toContain('collections/docs:read')

    await share(id, { userId: dave.id, access: 'view' })
    const one = await call('GET', `${DOCS}/${id}`, dave.token)
    expect(one.status, one.text).toBe(200)
    expect(one.body.data).toMatchObject({ id, title: 'for dave to see', created_by: alice.id })
    const list = await call('GET', `${DOCS}?limit=100`, dave.token)
    expect(list.status).toBe(200)
    expect(list.body).toMatchObject({ total: 1, data: [{ id, title: 'for dave to see' }] })
    expect(list.text).not.toContain('not for dave')

    // Neither his role nor a view share opens updates: he sees the record, so the refusal is the
    // permission he lacks (403), not a pretended absence.
    const patched = await call('PATCH', `${DOCS}/${id}`, dave.token, { title: 'dave edit' })
    expect(patched.status).toBe(403)
    expect(patched.body.message).toContain('collections/docs:update')
    expect((await call('DELETE', `${DOCS}/${id}`, dave.token)).status).toBe(403)
    expect(await stored(id)).toMatchObject({ title: 'for dave to see', _version: 1, deleted_at: null })
  })

  it('once someone holds a share, the records not shared with them are 404 (hidden), not 403', async () => {
    const erin = await personWith([])
    const mine = await newDoc('for erin')
    const other = await newDoc('not for erin')
    await share(mine, { userId: erin.id, access: 'edit' })
    const hidden = await call('GET', `${DOCS}/${other}`, erin.token)
    expect(hidden.status).toBe(404)
    expect(hidden.body.error).toBe('record_not_found')
    const patched = await call('PATCH', `${DOCS}/${other}`, erin.token, { title: 'erin edit' })
    expect(patched.status).toBe(404)
    expect((await stored(other))?.title).toBe('not for erin')
  })

  it('view to someone holding an update grant: reads, but PATCH is 404 and changes nothing', async () => {
    const id = await newDoc('for bob to see')
    expect((await call('GET', `${DOCS}/${id}`, bob.token)).status).toBe(404)
    await share(id, { userId: bob.id, access: 'view' })
    expect((await call('GET', `${DOCS}/${id}`, bob.token)).status).toBe(200)
    const patched = await call('PATCH', `${DOCS}/${id}`, bob.token, { title: 'bob edit' })
    expect(patched.status).toBe(404)
    expect(patched.body.error).toBe('record_not_found')
    const removed = await call('DELETE', `${DOCS}/${id}`, bob.token)
    expect(removed.status).toBe(404)
    expect(await stored(id)).toMatchObject({ title: 'for bob to see', _version: 1, deleted_at: null })
  })

  it('comment reads like view and does not edit', async () => {
    const id = await newDoc('for comments')
    await share(id, { userId: bob.id, access: 'comment' })
    expect((await call('GET', `${DOCS}/${id}`, bob.token)).status).toBe(200)
    expect((await call('PATCH', `${DOCS}/${id}`, bob.token, { title: 'bob edit' })).status).toBe(404)
    expect((await stored(id))?.title).toBe('for comments')
  })

  it('edit: PATCH works, even without a role grant; delete is not opened', async () => {
    const id = await newDoc('for carol to edit')
    await share(id, { userId: carol.id, access: 'edit' })
    const patched = await call('PATCH', `${DOCS}/${id}`, carol.token, { title: 'edited by carol' })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body).toMatchObject({
      id,
      title: 'edited by carol',
      updated_by: carol.id,
      created_by: alice.id,
      _version: 2,
    })
    expect(await stored(id)).toMatchObject({ title: 'edited by carol', updated_by: carol.id })

    const bobs = await newDoc('for bob to edit')
    await share(bobs, { userId: bob.id, access: 'edit' })
    expect((await call('PATCH', `${DOCS}/${bobs}`, bob.token, { title: 'edited by bob' })).status).toBe(200)
    const removed = await call('DELETE', `${DOCS}/${bobs}`, bob.token)
    expect(removed.status).toBe(404)
    expect(removed.body.error).toBe('record_not_found')
    expect(await stored(bobs)).toMatchObject({ title: 'edited by bob', deleted_at: null })
  })

  it('lowering edit to view closes editing on the next request', async () => {
    const id = await newDoc('downgraded')
    await share(id, { userId: bob.id, access: 'edit' })
    expect((await call('PATCH', `${DOCS}/${id}`, bob.token, { title: 'downgraded 2' })).status).toBe(200)
    await share(id, { userId: bob.id, access: 'view' })
    expect((await call('PATCH', `${DOCS}/${id}`, bob.token, { title: 'downgraded 3' })).status).toBe(404)
    expect((await call('GET', `${DOCS}/${id}`, bob.token)).status).toBe(200)
    expect((await stored(id))?.title).toBe('downgraded 2')
  })

  it('deleting a share takes access away on the very next request', async () => {
    const id = await newDoc('taken back')
    const made = await share(id, { userId: bob.id, access: 'edit' })
    expect((await call('GET', `${DOCS}/${id}`, bob.token)).status).toBe(200)
    const removed = await call('DELETE', `${sharesOf(id)}/${made.id}`, alice.token)
    expect(removed.status, removed.text).toBe(200)
    expect(removed.body).toEqual({ success: true })
    const after = await call('GET', `${DOCS}/${id}`, bob.token)
    expect(after.status).toBe(404)
    expect(after.body.error).toBe('record_not_found')
    expect((await call('PATCH', `${DOCS}/${id}`, bob.token, { title: 'too late' })).status).toBe(404)
    const list = await call('GET', `${DOCS}?limit=100`, bob.token)
    expect(list.text).not.toContain('taken back')
    expect(await listShares(id)).toEqual([])
    expect((await stored(id))?.title).toBe('taken back')
  })

  it('a share on a team collection with sharing opens a record to someone without a grant', async () => {
    const id = await newDoc('team board', alice.token, 'boards')
    expect((await call('GET', `/api/v1/collections/boards/records/${id}`, carol.token)).status).toBe(403)
    const made = await call('POST', sharesOf(id, 'boards'), alice.token, { userId: carol.id, access: 'view' })
    expect(made.status, made.text).toBe(201)
    const seen = await call('GET', `/api/v1/collections/boards/records/${id}`, carol.token)
    expect(seen.status, seen.text).toBe(200)
    expect(seen.body.data.title).toBe('team board')
  })
})

describe('API keys', () => {
  // Was a leak (fixed in access.ts): shares were added to the scope of any caller bound to the person,
  // so a key whose capabilities do not name the collection at all still read the records shared with
  // its creator. A key never does more than its capabilities (addendum §3).
  it('a key reaches shared records only when its capabilities cover the collection and the action', async () => {
    const frank = await personWith([{ resource: 'collections/boards', action: 'read' }])
    const id = await newDoc('for frank')
    await share(id, { userId: frank.id, access: 'edit' })
    const makeKey = async (capabilities: string[]) => {
      const reply = await call('POST', '/api/auth/api-keys', frank.token, {
        label: `key ${capabilities.join(' ')}`,
        capabilities,
      })
      expect(reply.status, reply.text).toBe(201)
      return reply.body.raw as string
    }
    const elsewhere = await makeKey(['collections/boards:read'])
    const refused = await call('GET', `${DOCS}/${id}`, elsewhere)
    expect(refused.status).toBe(403)
    expect(refused.text).not.toContain('for frank')
    expect((await call('GET', `${DOCS}?limit=100`, elsewhere)).status).toBe(403)
    expect((await call('PATCH', `${DOCS}/${id}`, elsewhere, { title: 'via key' })).status).toBe(403)
    expect((await stored(id))?.title).toBe('for frank')

    // The person himself reads and edits it.
    expect((await call('GET', `${DOCS}/${id}`, frank.token)).status).toBe(200)
    expect((await call('PATCH', `${DOCS}/${id}`, frank.token, { title: 'for frank, edited' })).status).toBe(200)
  })

  it('a key with read on the collection reads a record shared at edit, but does not edit it', async () => {
    const gina = await personWith([{ resource: 'collections/docs', action: 'read' }])
    const id = await newDoc('for gina')
    await share(id, { userId: gina.id, access: 'edit' })
    const made = await call('POST', '/api/auth/api-keys', gina.token, {
      label: 'gina reads docs',
      capabilities: ['collections/docs:read'],
    })
    expect(made.status, made.text).toBe(201)
    const key = made.body.raw as string
    const one = await call('GET', `${DOCS}/${id}`, key)
    expect(one.status, one.text).toBe(200)
    expect(one.body.data.title).toBe('for gina')
    const patched = await call('PATCH', `${DOCS}/${id}`, key, { title: 'via key' })
    expect(patched.status).toBe(403)
    expect(patched.body.message).toContain('collections/docs:update')
    expect((await stored(id))?.title).toBe('for gina')
    expect((await call('PATCH', `${DOCS}/${id}`, gina.token, { title: 'for gina, edited' })).status).toBe(200)
  })
})

// Decision 012: creating, changing or removing a share needs update on the record, the acting key's
// capabilities included, and a share never opens more than its giver reaches.
describe('a share never exceeds what its giver may do', () => {
  const makeKey = async (token: string, capabilities: string[]): Promise<string> => {
    const reply = await call('POST', '/api/auth/api-keys', token, {
      label: `sharer ${capabilities.join(' ')}`,
      capabilities,
    })
    expect(reply.status, reply.text).toBe(201)
    return reply.body.raw as string
  }

  it("a read-only key of the record's owner cannot share it at edit (403); the grantee cannot overwrite it", async () => {
    const id = await newDoc('private note')
    const grantee = await personWith([])
    const readOnly = await makeKey(alice.token, ['collections/docs:read'])
    const reply = await call('POST', sharesOf(id), readOnly, { userId: grantee.id, access: 'edit' })
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body).toMatchObject({
      error: 'forbidden',
      details: { resource: 'collections/docs', action: 'update' },
    })
    expect(await listShares(id)).toEqual([])
    const overwrite = await call('PATCH', `${DOCS}/${id}`, grantee.token, { title: 'overwritten' })
    expect(overwrite.status).toBe(403)
    expect((await stored(id))?.title).toBe('private note')
    // Nor at view or comment: any change of a record's shares needs update on it.
    for (const access of ['view', 'comment'])
      expect((await call('POST', sharesOf(id), readOnly, { userId: grantee.id, access })).status).toBe(403)
    expect(await listShares(id)).toEqual([])
  })

  it('a read-only key can neither change the level of a share nor remove it', async () => {
    const id = await newDoc('kept shares')
    const made = await share(id, { userId: bob.id, access: 'view' })
    const readOnly = await makeKey(alice.token, ['collections/docs:read'])
    expect((await call('POST', sharesOf(id), readOnly, { userId: bob.id, access: 'edit' })).status).toBe(403)
    expect((await call('DELETE', `${sharesOf(id)}/${made.id}`, readOnly)).status).toBe(403)
    expect((await listShares(id)).map((s) => [s.userId, s.access])).toEqual([[bob.id, 'view']])
    // It still lists them: reading the shares needs read, as before.
    expect((await call('GET', sharesOf(id), readOnly)).status).toBe(200)
  })

  it("a key with update on the collection shares its owner's record", async () => {
    const id = await newDoc('shared by key')
    const writer = await makeKey(alice.token, ['collections/docs:read', 'collections/docs:update'])
    const reply = await call('POST', sharesOf(id), writer, { userId: carol.id, access: 'edit' })
    expect(reply.status, reply.text).toBe(201)
    expect((await call('PATCH', `${DOCS}/${id}`, carol.token, { title: 'edited by carol' })).status).toBe(200)
  })

  it('an owner whose role holds no update on the collection cannot share (403) at any level', async () => {
    const reader = await personWith([
      { resource: 'collections/docs', action: 'read' },
      { resource: 'collections/docs', action: 'create' },
    ])
    const id = await newDoc('read-only owner', reader.token)
    for (const access of ['view', 'comment', 'edit']) {
      const reply = await call('POST', sharesOf(id), reader.token, { userId: carol.id, access })
      expect(reply.status, reply.text).toBe(403)
      expect(reply.body.details).toMatchObject({ resource: 'collections/docs', action: 'update' })
    }
    expect(await listShares(id)).toEqual([])
  })

  it('an owner whose update grant does not reach the record cannot share it (403)', async () => {
    const drafter = await personWith([
      { resource: 'collections/docs', action: 'read' },
      { resource: 'collections/docs', action: 'create' },
      { resource: 'collections/docs', action: 'update', item_filter: { title: { _eq: 'draft' } } },
    ])
    const id = await newDoc('final', drafter.token)
    const reply = await call('POST', sharesOf(id), drafter.token, { userId: carol.id, access: 'view' })
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body.details).toMatchObject({ resource: 'collections/docs', action: 'update' })
    const draft = await newDoc('draft', drafter.token)
    expect((await call('POST', sharesOf(draft), drafter.token, { userId: carol.id, access: 'edit' })).status).toBe(201)
  })

  it('an owner who may update only some fields shares at view or comment, not at edit', async () => {
    const titler = await personWith([
      { resource: 'collections/docs', action: 'read' },
      { resource: 'collections/docs', action: 'create' },
      { resource: 'collections/docs', action: 'update', fields: ['title'] },
    ])
    const id = await newDoc('column limited', titler.token)
    const edit = await call('POST', sharesOf(id), titler.token, { userId: carol.id, access: 'edit' })
    expect(edit.status, edit.text).toBe(403)
    expect(edit.body.details).toMatchObject({ resource: 'collections/docs', action: 'update' })
    expect((await call('POST', sharesOf(id), titler.token, { userId: carol.id, access: 'comment' })).status).toBe(201)
    expect((await call('POST', sharesOf(id), titler.token, { userId: carol.id, access: 'view' })).status).toBe(201)
    expect((await listShares(id)).map((s) => [s.userId, s.access])).toEqual([[carol.id, 'view']])
  })

  it('an owner who may read only some fields shares at no level', async () => {
    const narrow = await personWith([
      { resource: 'collections/docs', action: 'read', fields: ['title'] },
      { resource: 'collections/docs', action: 'create' },
      { resource: 'collections/docs', action: 'update' },
    ])
    const id = await newDoc('read limited', narrow.token)
    for (const access of ['view', 'comment', 'edit']) {
      const reply = await call('POST', sharesOf(id), narrow.token, { userId: carol.id, access })
      expect(reply.status, reply.text).toBe(403)
      expect(reply.body.details).toMatchObject({ resource: 'collections/docs', action: 'read' })
    }
    expect(await listShares(id)).toEqual([])
  })
})

describe('sharing off', () => {
  it('is 400 on every shares endpoint of the collection, and the person gains nothing', async () => {
    const id = await newDoc('sealed doc', alice.token, 'sealed')
    for (const [method, path, body] of [
      ['GET', sharesOf(id, 'sealed'), undefined],
      ['POST', sharesOf(id, 'sealed'), { userId: bob.id, access: 'view' }],
      ['DELETE', `${sharesOf(id, 'sealed')}/anything`, undefined],
    ] as const) {
      const reply = await call(method, path, alice.token, body)
      expect(reply.status, `${method} ${path}`).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
    }
    expect((await call('GET', `/api/v1/collections/sealed/records/${id}`, bob.token)).status).toBe(404)
  })
})
