import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, setGrants, signUpOwner, type Account } from '../support/identity.js'
import { client, createCollection, createRecord, freshName, recordsPath } from './records-fixtures.js'

/**
 * Relations to the project's users (issue 28 item 7, decision 061): `relationConfig.targetCollection:
 * "users"`. Writes name members of the project only; expand shows a public profile (email only with
 * system/users:read, the id to whom may see no profile); filters follow `assignee.name`; deleting a user
 * applies each relation's onDelete. Runs on every storage type the records suites run on.
 */

let server: TestServer
let owner: Account
let sam: Account
let ada: Account
let viewer: Account
let editor: Account
let foreignUserId: string
const api = client(() => server)

const filterOf = (filter: unknown) => JSON.stringify(filter)
const ids = (reply: { body: { data: { id: string }[] } }) => reply.body.data.map((r) => r.id).sort()

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  sam = await createAccount(server, owner.token, { role: 'editor', name: 'Sam', email: 'sam@example.com' })
  ada = await createAccount(server, owner.token, { role: 'editor', name: 'Ada', email: 'ada@example.com' })
  viewer = await createAccount(server, owner.token, { role: 'viewer', name: 'Vi' })
  editor = await createAccount(server, owner.token, { role: 'editor', name: 'Ed' })
  // A user of another project: never linkable here, never revealed.
  const project = await api.post('/api/v1/projects', owner.token, { name: 'Elsewhere' })
  expect(project.status, project.text).toBe(201)
  const there = { 'X-Project-Id': project.body.data.id as string }
  const foreign = await api.post(
    '/api/v1/users',
    owner.token,
    { email: 'far@example.com', password: 'a good password', name: 'Far', role: 'editor' },
    there,
  )
  expect(foreign.status, foreign.text).toBe(201)
  foreignUserId = foreign.body.data.id
})
afterAll(async () => {
  await server?.stop()
})

const userFields = (onDelete = 'set-null') => [
  { name: 'title', type: 'text', required: false },
  {
    name: 'assignee',
    type: 'relation',
    required: false,
    relationConfig: { targetCollection: 'users', relationType: 'belongsTo', onDelete },
  },
  {
    name: 'watchers',
    type: 'relation',
    required: false,
    relationConfig: { targetCollection: 'users', relationType: 'hasMany' },
  },
]

describe('defining a relation to users', () => {
  it('accepts targetCollection "users" (belongsTo and hasMany) and answers it as sent', async () => {
    const name = await createCollection(server, owner.token, freshName('tasks'), userFields())
    const reply = await api.get(`/api/v1/collections/${name}`, owner.token)
    expect(reply.status, reply.text).toBe(200)
    const assignee = reply.body.data.fields.find((f: { name: string }) => f.name === 'assignee')
    expect(assignee.relationConfig).toEqual({
      targetCollection: 'users',
      relationType: 'belongsTo',
      onDelete: 'set-null',
    })
  })

  it('refuses a displayField that is not a profile field, and lookups and rollups through users', async () => {
    const relation = { targetCollection: 'users', relationType: 'belongsTo', displayField: 'password_hash' }
    const bad = await api.post('/api/v1/collections', owner.token, {
      name: freshName('bad'),
      fields: [{ name: 'assignee', type: 'relation', required: false, relationConfig: relation }],
    })
    expect(bad.status, bad.text).toBe(400)
    expect(bad.body.message).toContain('not a profile field of users')
    const named = await api.post('/api/v1/collections', owner.token, {
      name: freshName('ok'),
      fields: [
        { name: 'assignee', type: 'relation', required: false, relationConfig: { ...relation, displayField: 'name' } },
      ],
    })
    expect(named.status, named.text).toBe(201)
    const lookup = await api.post('/api/v1/collections', owner.token, {
      name: freshName('bad'),
      fields: [
        ...userFields(),
        {
          name: 'who',
          type: 'lookup',
          required: false,
          lookupConfig: { relationField: 'assignee', targetField: 'name' },
        },
      ],
    })
    expect(lookup.status, lookup.text).toBe(400)
    expect(lookup.body.message).toContain("points at the project's users")
  })

  it('is no collection: "users" stays a reserved collection name', async () => {
    const reply = await api.post('/api/v1/collections', owner.token, { name: 'users', fields: [] })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.error).toBe('reserved_name')
  })
})

describe('adding a relation to users to an existing collection', () => {
  it('PATCH adds it like any new field; writes are checked from then on', async () => {
    const name = await createCollection(server, owner.token, freshName('notes'), [
      { name: 'title', type: 'text', required: false },
    ])
    const current = await api.get(`/api/v1/collections/${name}`, owner.token)
    const reviewer = {
      name: 'reviewer',
      type: 'relation',
      required: false,
      relationConfig: { targetCollection: 'users', relationType: 'belongsTo' },
    }
    const patched = await api.patch(`/api/v1/collections/${name}`, owner.token, {
      fields: [...current.body.data.fields, reviewer],
    })
    expect(patched.status, patched.text).toBe(200)
    expect((await api.post(recordsPath(name), owner.token, { reviewer: foreignUserId })).status).toBe(422)
    const made = await createRecord(server, owner.token, name, { title: 't', reviewer: sam.id })
    const read = await api.get(recordsPath(name, made.id, { expand: 'reviewer' }), editor.token)
    expect(read.body.data.reviewer).toEqual({ id: sam.id, name: 'Sam' })
  })
})

describe('writing, filtering and expanding', () => {
  let tasks: string
  let forSam: Record<string, any>
  let forAda: Record<string, any>

  beforeAll(async () => {
    tasks = await createCollection(server, owner.token, freshName('tasks'), userFields())
    forSam = await createRecord(server, editor.token, tasks, { title: 'one', assignee: sam.id, watchers: [ada.id] })
    forAda = await createRecord(server, editor.token, tasks, { title: 'two', assignee: ada.id, watchers: [] })
  })

  it('stores a member of the project, and refuses an id that is no user of it (422, nothing written)', async () => {
    expect(forSam.assignee).toBe(sam.id)
    const bogus = await api.post(recordsPath(tasks), editor.token, { title: 'x', assignee: 'no_such_user' })
    expect(bogus.status, bogus.text).toBe(422)
    expect(bogus.body.error).toBe('validation_error')
    expect(bogus.body.message).toBe('"assignee" names an id that is not a user of this project')
  })

  it("refuses another project's user exactly as an id that does not exist (not linkable, not revealed)", async () => {
    const foreign = await api.post(recordsPath(tasks), editor.token, { title: 'x', assignee: foreignUserId })
    const bogus = await api.post(recordsPath(tasks), editor.token, { title: 'x', assignee: 'no_such_user' })
    expect(foreign.status, foreign.text).toBe(422)
    expect(foreign.body.message).toBe(bogus.body.message)
    expect(JSON.stringify(foreign.body.details).replace(foreignUserId, 'ID')).toBe(
      JSON.stringify(bogus.body.details).replace('no_such_user', 'ID'),
    )
    const inList = await api.patch(recordsPath(tasks, forAda.id), editor.token, { watchers: [sam.id, foreignUserId] })
    expect(inList.status, inList.text).toBe(422)
    expect(inList.body.details.missing).toEqual([foreignUserId])
    const list = await api.get(recordsPath(tasks, undefined, { limit: 100 }), owner.token)
    expect(list.body.data).toHaveLength(2)
  })

  it('checks each line of an NDJSON import the same way', async () => {
    const lines = [
      { title: 'imported', assignee: ada.id, watchers: [sam.id] },
      { title: 'foreign', assignee: foreignUserId },
      { title: 'foreign watcher', watchers: [ada.id, foreignUserId] },
    ]
    const reply = await server.request('POST', `/api/v1/collections/${tasks}/records/import-ndjson`, {
      token: owner.token,
      rawBody: lines.map((line) => JSON.stringify(line)).join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({ imported: 1, failed: 2 })
    expect(reply.body.errors).toEqual([
      expect.objectContaining({ line: 2, code: 'validation_error', field: 'assignee' }),
      expect.objectContaining({ line: 3, code: 'validation_error', field: 'watchers' }),
    ])
    const imported = reply.body.records[0].id as string
    expect((await api.del(recordsPath(tasks, imported, { permanent: true }), owner.token)).status).toBe(200)
  })

  it('filters on the id, with $CURRENT_USER', async () => {
    const mine = await api.get(
      recordsPath(tasks, undefined, { filter: filterOf({ assignee: { _eq: '$CURRENT_USER' } }) }),
      sam.token,
    )
    expect(mine.status, mine.text).toBe(200)
    expect(ids(mine)).toEqual([forSam.id])
  })

  it("scopes a grant with item_filter assignee = $CURRENT_USER to each user's own records", async () => {
    const role = await api.post('/api/v1/roles', owner.token, { name: freshName('assignees') })
    expect(role.status, role.text).toBe(201)
    await setGrants(server, owner.token, role.body.data.name, [
      { resource: `collections/${tasks}`, action: 'read', item_filter: { assignee: { _eq: '$CURRENT_USER' } } },
    ])
    const worker = await createAccount(server, owner.token, { role: role.body.data.name, name: 'Worker' })
    const theirs = await createRecord(server, owner.token, tasks, { title: 'w', assignee: worker.id })
    const reply = await api.get(recordsPath(tasks, undefined, { limit: 100 }), worker.token)
    expect(reply.status, reply.text).toBe(200)
    expect(ids(reply)).toEqual([theirs.id])
    expect((await api.del(recordsPath(tasks, theirs.id, { permanent: true }), owner.token)).status).toBe(200)
  })

  it('filters through the relation on profile fields, in both formats', async () => {
    const byName = await api.get(
      recordsPath(tasks, undefined, { filter: filterOf({ 'assignee.name': { _eq: 'Sam' } }) }),
      viewer.token,
    )
    expect(byName.status, byName.text).toBe(200)
    expect(ids(byName)).toEqual([forSam.id])
    const array = await api.get(
      recordsPath(tasks, undefined, {
        filter: filterOf([{ field: 'assignee.name', op: 'starts_with', value: 'A' }]),
      }),
      viewer.token,
    )
    expect(array.status, array.text).toBe(200)
    expect(ids(array)).toEqual([forAda.id])
    const negated = await api.get(
      recordsPath(tasks, undefined, { filter: filterOf({ 'assignee.name': { _neq: 'Sam' } }) }),
      viewer.token,
    )
    expect(ids(negated)).toEqual([forAda.id])
  })

  it('matches email only for a caller with system/users:read; others learn nothing from it', async () => {
    const filter = filterOf({ 'assignee.email': { _starts_with: 'sam@' } })
    const asOwner = await api.get(recordsPath(tasks, undefined, { filter }), owner.token)
    expect(asOwner.status, asOwner.text).toBe(200)
    expect(ids(asOwner)).toEqual([forSam.id])
    const asViewer = await api.get(recordsPath(tasks, undefined, { filter }), viewer.token)
    expect(asViewer.status, asViewer.text).toBe(200)
    expect(asViewer.body.data).toEqual([])
    const negatedAsViewer = await api.get(
      recordsPath(tasks, undefined, { filter: filterOf({ 'assignee.email': { _nnull: true } }) }),
      viewer.token,
    )
    expect(negatedAsViewer.body.data).toEqual([])
  })

  it('compares hostile names as plain values (quotes, LIKE wildcards, backslashes)', async () => {
    const odd = await createAccount(server, owner.token, { role: 'editor', name: "O'Brien 100%_\\ x" })
    const theirs = await createRecord(server, owner.token, tasks, { title: 'odd', assignee: odd.id })
    for (const [op, value] of [
      ['_contains', '%_'],
      ['_contains', "'"],
      ['_starts_with', "O'Brien 100%"],
      ['_ends_with', '\\ x'],
      ['_eq', "O'Brien 100%_\\ x"],
    ]) {
      const reply = await api.get(
        recordsPath(tasks, undefined, { filter: filterOf({ 'assignee.name': { [op!]: value } }) }),
        viewer.token,
      )
      expect(reply.status, reply.text).toBe(200)
      expect(ids(reply), `${op} ${value}`).toEqual([theirs.id])
    }
    const wildcard = await api.get(
      recordsPath(tasks, undefined, { filter: filterOf({ 'assignee.name': { _contains: '_' } }) }),
      viewer.token,
    )
    expect(ids(wildcard)).toEqual([theirs.id])
    expect((await api.del(recordsPath(tasks, theirs.id, { permanent: true }), owner.token)).status).toBe(200)
  })

  it('keeps refusing a sort through the relation (400)', async () => {
    const reply = await api.get(recordsPath(tasks, undefined, { sortBy: 'assignee.name' }), owner.token)
    expect(reply.status, reply.text).toBe(400)
  })

  it('refuses a path past the profile fields (400 naming it)', async () => {
    for (const path of ['assignee.password_hash', 'assignee.name.first', 'assignee.role']) {
      const reply = await api.get(
        recordsPath(tasks, undefined, { filter: filterOf({ [path]: { _eq: 'x' } }) }),
        owner.token,
      )
      expect(reply.status, `${path}: ${reply.text}`).toBe(400)
      expect(reply.body.message).toContain(`filter.${path}`)
    }
  })

  it('expands to the profile with email for an administrator', async () => {
    const reply = await api.get(recordsPath(tasks, forSam.id, { expand: 'assignee,watchers' }), owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.assignee).toEqual({ id: sam.id, name: 'Sam', email: 'sam@example.com' })
    expect(reply.body.data.watchers).toEqual([{ id: ada.id, name: 'Ada', email: 'ada@example.com' }])
  })

  it('expands to the public profile only (id, name) for a viewer', async () => {
    const reply = await api.get(
      recordsPath(tasks, undefined, { expand: 'assignee,watchers', limit: 100 }),
      viewer.token,
    )
    expect(reply.status, reply.text).toBe(200)
    const one = reply.body.data.find((r: { id: string }) => r.id === forSam.id)
    expect(one.assignee).toEqual({ id: sam.id, name: 'Sam' })
    expect(one.watchers).toEqual([{ id: ada.id, name: 'Ada' }])
    expect(reply.text).not.toContain('@example.com')
  })

  it('shows email to a role granted system/users:read', async () => {
    const role = await api.post('/api/v1/roles', owner.token, { name: freshName('people') })
    expect(role.status, role.text).toBe(201)
    await setGrants(server, owner.token, role.body.data.name, [
      { resource: 'collections/*', action: 'read' },
      { resource: 'system/users', action: 'read' },
    ])
    const hr = await createAccount(server, owner.token, { role: role.body.data.name })
    const reply = await api.get(recordsPath(tasks, forSam.id, { expand: 'assignee' }), hr.token)
    expect(reply.body.data.assignee).toEqual({ id: sam.id, name: 'Sam', email: 'sam@example.com' })
  })

  it('refuses an expand past users (400)', async () => {
    const reply = await api.get(recordsPath(tasks, forSam.id, { expand: 'assignee.team' }), owner.token)
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.message).toContain('leads to users')
  })
})

// A durable_object or r2_sql collection is a database of its own: a path between two collections stays
// within one database (decision 059), so the chain below runs where both live in the project's database.
const oneDatabase = !['durable_object', 'r2_sql'].includes(process.env.TEST_STORAGE_TYPE ?? '')

describe.runIf(oneDatabase)('a path through a collection to users', () => {
  it('follows items.board.owner.name', async () => {
    const boards = await createCollection(server, owner.token, freshName('boards'), [
      { name: 'label', type: 'text', required: false },
      {
        name: 'owner',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: 'users', relationType: 'belongsTo' },
      },
    ])
    const items = await createCollection(server, owner.token, freshName('items'), [
      {
        name: 'board',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: boards, relationType: 'belongsTo' },
      },
    ])
    const samsBoard = await createRecord(server, owner.token, boards, { label: 's', owner: sam.id })
    const adasBoard = await createRecord(server, owner.token, boards, { label: 'a', owner: ada.id })
    const one = await createRecord(server, owner.token, items, { board: samsBoard.id })
    await createRecord(server, owner.token, items, { board: adasBoard.id })
    const reply = await api.get(
      recordsPath(items, undefined, { filter: filterOf({ 'board.owner.name': { _eq: 'Sam' } }) }),
      viewer.token,
    )
    expect(reply.status, reply.text).toBe(200)
    expect(ids(reply)).toEqual([one.id])
    const expanded = await api.get(recordsPath(items, one.id, { expand: 'board.owner' }), viewer.token)
    expect(expanded.status, expanded.text).toBe(200)
    expect(expanded.body.data.board.owner).toEqual({ id: sam.id, name: 'Sam' })
  })
})

describe('a caller who may see no profile', () => {
  it('an anonymous reader of a public collection keeps the ids, and a filter through users matches nothing', async () => {
    const open = await createCollection(server, owner.token, freshName('board'), userFields(), {
      accessControl: { preset: 'public' },
    })
    const card = await createRecord(server, owner.token, open, { title: 'c', assignee: sam.id, watchers: [ada.id] })
    const reply = await api.get(recordsPath(open, card.id, { expand: 'assignee,watchers' }))
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.assignee).toBe(sam.id)
    expect(reply.body.data.watchers).toEqual([ada.id])
    const filtered = await api.get(
      recordsPath(open, undefined, { filter: filterOf({ 'assignee.name': { _eq: 'Sam' } }) }),
    )
    expect(filtered.status, filtered.text).toBe(200)
    expect(filtered.body.data).toEqual([])
    const asViewer = await api.get(
      recordsPath(open, undefined, { filter: filterOf({ 'assignee.name': { _eq: 'Sam' } }) }),
      viewer.token,
    )
    expect(ids(asViewer)).toEqual([card.id])
  })
})

describe('deleting a user applies each relation onDelete', () => {
  it('restrict refuses the deletion (409 with the count) and keeps the account and the records', async () => {
    const person = await createAccount(server, owner.token, { role: 'editor', name: 'Rita' })
    const approvals = await createCollection(server, owner.token, freshName('approvals'), userFields('restrict'))
    const held = await createRecord(server, owner.token, approvals, { title: 'a', assignee: person.id })
    const refused = await api.del(`/api/v1/users/${person.id}`, owner.token)
    expect(refused.status, refused.text).toBe(409)
    expect(refused.body.error).toBe('conflict')
    expect(refused.body.details).toMatchObject({ collection: approvals, field: 'assignee', count: 1 })
    expect((await api.get(`/api/v1/users/${person.id}`, owner.token)).status).toBe(200)
    // Once nothing active points at the user, the deletion goes through.
    expect((await api.patch(recordsPath(approvals, held.id), owner.token, { assignee: null })).status).toBe(200)
    const gone = await api.del(`/api/v1/users/${person.id}`, owner.token)
    expect(gone.status, gone.text).toBe(200)
    expect((await api.get(`/api/v1/users/${person.id}`, owner.token)).status).toBe(404)
  })

  it('set-null clears the field (soft-deleted records too), hasMany loses the id, cascade deletes', async () => {
    const person = await createAccount(server, owner.token, { role: 'editor', name: 'Leaving' })
    const stays = await createAccount(server, owner.token, { role: 'editor', name: 'Staying' })
    const cleared = await createCollection(server, owner.token, freshName('cleared'), userFields('set-null'))
    const owned = await createCollection(server, owner.token, freshName('owned'), userFields('cascade'))
    const a = await createRecord(server, owner.token, cleared, {
      title: 'a',
      assignee: person.id,
      watchers: [person.id, stays.id],
    })
    const other = await createRecord(server, owner.token, cleared, { title: 'b', assignee: stays.id })
    const asleep = await createRecord(server, owner.token, cleared, { title: 'c', assignee: person.id })
    expect((await api.del(recordsPath(cleared, asleep.id), owner.token)).status).toBe(200)
    const doomed = await createRecord(server, owner.token, owned, { title: 'd', assignee: person.id })
    const kept = await createRecord(server, owner.token, owned, { title: 'e', assignee: stays.id })

    const reply = await api.del(`/api/v1/users/${person.id}`, owner.token)
    expect(reply.status, reply.text).toBe(200)

    const afterA = await api.get(recordsPath(cleared, a.id), owner.token)
    expect(afterA.body.data.assignee).toBeNull()
    expect(afterA.body.data.watchers).toEqual([stays.id])
    expect((await api.get(recordsPath(cleared, other.id), owner.token)).body.data.assignee).toBe(stays.id)
    const restored = await api.post(`${recordsPath(cleared, asleep.id)}/restore`, owner.token)
    expect(restored.status, restored.text).toBe(200)
    expect((await api.get(recordsPath(cleared, asleep.id), owner.token)).body.data.assignee).toBeNull()
    expect((await api.get(recordsPath(owned, doomed.id, { include_deleted: true }), owner.token)).status).toBe(404)
    expect((await api.get(recordsPath(owned, kept.id), owner.token)).body.data.assignee).toBe(stays.id)
  })
})
