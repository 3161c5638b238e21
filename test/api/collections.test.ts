import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tableIdentifier } from '../../src/lib/db/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios, type Scenario } from '../support/scenarios.js'
import {
  accountWithGrants,
  createCollection,
  createRecord,
  field,
  getCollection,
  listedNames,
  uniqueName,
} from './collections-support.js'

/**
 * POST, GET (list and one) /api/v1/collections: the created shape, every naming rule and error code, the
 * storage types, what a refused DDL leaves behind (nothing), who sees which collection, column statuses.
 * PATCH and DELETE are in collections-update.test.ts, remote storage in collections-remote.test.ts.
 */

let server: TestServer
let owner: Account
let viewer: Account
let editor: Account

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
  editor = await createAccount(server, owner.token, { role: 'editor' })
})
afterAll(async () => {
  await server?.stop()
})

const post = (body: unknown, token: string = owner.token) =>
  server.request('POST', '/api/v1/collections', { token, body })
const nowSeconds = () => Math.floor(Date.now() / 1000)

/** What GET detail's columnStatuses reports as the column type, per dialect. */
const columnTypes = {
  sqlite: {
    id: 'TEXT',
    created_at: 'INTEGER',
    updated_at: 'INTEGER',
    created_by: 'TEXT',
    updated_by: 'TEXT',
    deleted_at: 'INTEGER',
    _version: 'INTEGER',
    owned_by: 'TEXT',
    text: 'TEXT',
    integer: 'INTEGER',
    boolean: 'INTEGER',
    json: 'TEXT',
    decimal: 'NUMERIC',
    number: 'REAL',
    belongsTo: 'TEXT',
    hasMany: 'TEXT',
  },
  postgres: {
    id: 'text',
    created_at: 'bigint',
    updated_at: 'bigint',
    created_by: 'text',
    updated_by: 'text',
    deleted_at: 'bigint',
    _version: 'integer',
    owned_by: 'text',
    text: 'text',
    integer: 'bigint',
    boolean: 'boolean',
    json: 'jsonb',
    decimal: 'numeric',
    number: 'double precision',
    belongsTo: 'text',
    hasMany: 'jsonb',
  },
} as const
const systemColumns = [
  'id',
  'created_at',
  'updated_at',
  'created_by',
  'updated_by',
  'deleted_at',
  '_version',
  'owned_by',
] as const
const reservedNames = [
  'auth',
  'users',
  'roles',
  'permissions',
  'databases',
  'files',
  'settings',
  'plugins',
  'api-keys',
  'modules',
  'system',
  'schema',
  'health',
  'metrics',
  'hooks',
  'webhooks',
]

describe('POST /api/v1/collections', () => {
  it('answers 201 with the collection in { data }: d1 by default, project database, schemaVersion 1, fields normalised', async () => {
    const name = uniqueName('articles')
    const before = nowSeconds()
    const reply = await post({
      name,
      fields: [
        { name: 'title', type: 'text', required: true, label: 'Title', validationRules: { maxLength: 200 } },
        { name: 'body', type: 'richtext', required: false, unique: null, label: null },
        { name: 'meta', type: 'jsonb', required: false },
        {
          name: 'status',
          type: 'enum',
          required: false,
          enumValues: ['draft', 'published'],
          defaultValue: 'draft',
          indexed: true,
        },
      ],
    })
    const after = nowSeconds()
    expect(reply.status, reply.text).toBe(201)
    // core-api § Errors: a single item is { data } (only a created record is answered bare).
    expect(Object.keys(reply.body)).toEqual(['data'])
    const created = reply.body.data
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      projectId: server.app.defaultProject.id,
      name,
      storageType: 'd1',
      databaseId: 'main',
      schemaVersion: 1,
      fields: [
        {
          name: 'title',
          type: 'text',
          required: true,
          unique: false,
          indexed: false,
          label: 'Title',
          validationRules: { maxLength: 200 },
        },
        { name: 'body', type: 'richtext', required: false, unique: false, indexed: false },
        { name: 'meta', type: 'json', required: false, unique: false, indexed: false },
        {
          name: 'status',
          type: 'enum',
          required: false,
          unique: false,
          indexed: true,
          enumValues: ['draft', 'published'],
          defaultValue: 'draft',
        },
      ],
      indexes: [],
      accessControl: null,
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    })
    expect(Number.isInteger(created.createdAt)).toBe(true)
    expect(created.createdAt).toBeGreaterThanOrEqual(before)
    expect(created.createdAt).toBeLessThanOrEqual(after)
    expect(created.updatedAt).toBe(created.createdAt)

    // The list and the detail show the same collection, and it takes records at once.
    const listed = await server.request('GET', '/api/v1/collections', { token: owner.token })
    expect(listed.body.data).toContainEqual(created)
    expect(await getCollection(server, owner.token, name)).toMatchObject(created)
    const record = await createRecord(server, owner.token, name, { title: 'Hello' })
    expect(record).toMatchObject({ title: 'Hello', status: 'draft', body: null, meta: null, _version: 1 })
  })

  it('keeps the accessControl it is given and fills in relation and computed-field defaults', async () => {
    const people = uniqueName('people')
    await createCollection(server, owner.token, { name: people, fields: [field('name', 'text')] })
    const name = uniqueName('tasks')
    const created = await createCollection(server, owner.token, {
      name,
      accessControl: { preset: 'private', sharing: true },
      fields: [
        field('assignee', 'relation', {
          relationConfig: { targetCollection: people, relationType: 'belongsTo', displayField: 'name' },
        }),
        field('assignee_name', 'lookup', {
          lookupConfig: { relationField: 'assignee', targetField: 'name' },
          resultType: 'boolean',
        }),
      ],
    })
    expect(created.accessControl).toEqual({ preset: 'private', sharing: true })
    expect(created.fields).toEqual([
      {
        name: 'assignee',
        type: 'relation',
        required: false,
        unique: false,
        indexed: false,
        relationConfig: {
          targetCollection: people,
          relationType: 'belongsTo',
          displayField: 'name',
          onDelete: 'set-null',
        },
      },
      // resultType is derived by the server from the target field, whatever the client sent.
      {
        name: 'assignee_name',
        type: 'lookup',
        required: false,
        unique: false,
        indexed: false,
        lookupConfig: { relationField: 'assignee', targetField: 'name' },
        resultType: 'text',
      },
    ])
    expect((await getCollection(server, owner.token, name)).accessControl).toEqual({ preset: 'private', sharing: true })
  })

  it('accepts a collection without fields, and storageType d1 with databaseId main', async () => {
    const name = uniqueName('bare')
    const created = await createCollection(server, owner.token, {
      name,
      storageType: 'd1',
      databaseId: 'main',
      fields: [],
    })
    expect(created).toMatchObject({ name, storageType: 'd1', databaseId: 'main', fields: [] })
    expect(
      (await getCollection(server, owner.token, name)).columnStatuses.map((c: { name: string }) => c.name),
    ).toEqual([...systemColumns])
  })

  it('takes names the search index or the database might trip on: text fields rank, oid, c0; long names', async () => {
    const name = uniqueName('tricky')
    await createCollection(server, owner.token, {
      name,
      fields: [
        field('rank', 'text'),
        field('oid', 'text'),
        field('c0', 'text'),
        field('content', 'richtext'),
        field(`${name}__search`.slice(0, 50), 'text'),
      ],
    })
    const record = await createRecord(server, owner.token, name, {
      rank: 'captain',
      oid: 'x1',
      c0: 'zero',
      content: '<p>deck</p>',
    })
    for (const word of ['captain', 'zero', 'deck']) {
      const found = await server.request('GET', `/api/v1/collections/${name}/records?search=${word}`, {
        token: owner.token,
      })
      expect(found.status, found.text).toBe(200)
      expect(
        found.body.data.map((r: { id: string }) => r.id),
        word,
      ).toEqual([record.id])
    }
    const updated = await server.request('PATCH', `/api/v1/collections/${name}/records/${record.id}`, {
      token: owner.token,
      body: { rank: 'admiral' },
    })
    expect(updated.status, updated.text).toBe(200)
    expect(
      (await server.request('GET', `/api/v1/collections/${name}/records?search=captain`, { token: owner.token })).body
        .data,
    ).toEqual([])
    expect(
      (await server.request('GET', `/api/v1/collections/${name}/records?search=admiral`, { token: owner.token })).body
        .total,
    ).toBe(1)
  })

  it('a 50-character name with long field names gets every index it asks for (PostgreSQL cuts names at 63 bytes)', async () => {
    const name = `l${uniqueName('').replace(/[^a-z0-9_]/g, '')}`.padEnd(50, 'l')
    const created = await post({
      name,
      fields: [
        field('description', 'text', { unique: true, indexed: true }),
        field('abcdefghij_1', 'text', { unique: true }),
        field('abcdefghij_2', 'text', { unique: true }),
        field('created_at_local', 'integer', { indexed: true }),
        field('search', 'text', { indexed: true }),
      ],
    })
    expect(created.status, created.text).toBe(201)
    await createRecord(server, owner.token, name, { description: 'd', abcdefghij_1: 'a', abcdefghij_2: 'a' })
    for (const dup of [{ description: 'd' }, { abcdefghij_1: 'a' }, { abcdefghij_2: 'a' }]) {
      const reply = await server.request('POST', `/api/v1/collections/${name}/records`, {
        token: owner.token,
        body: dup,
      })
      expect(reply.status, JSON.stringify(dup)).toBe(409)
    }
    // Toggling a long-named index off and on again works too.
    const off = await server.request('PATCH', `/api/v1/collections/${name}`, {
      token: owner.token,
      body: { fields: created.body.data.fields.map((f: { indexed: boolean }) => ({ ...f, indexed: false })) },
    })
    expect(off.status, off.text).toBe(200)
    const on = await server.request('PATCH', `/api/v1/collections/${name}`, {
      token: owner.token,
      body: { fields: created.body.data.fields },
    })
    expect(on.status, on.text).toBe(200)
    expect((await server.request('DELETE', `/api/v1/collections/${name}`, { token: owner.token })).status).toBe(200)
  })

  it('accepts names of exactly 1 and 50 characters', async () => {
    const longest = `z${uniqueName('').replace(/[^a-z0-9_]/g, '')}`.padEnd(50, 'x')
    expect(longest).toHaveLength(50)
    for (const name of [longest, 'q']) {
      const reply = await post({ name, fields: [field('n', 'integer')] })
      expect(reply.status, `${name}: ${reply.text}`).toBe(201)
      expect(reply.body.data.name).toBe(name)
    }
  })

  describe('names', () => {
    const invalid: [string, unknown][] = [
      ['51 characters', `a${'b'.repeat(50)}`],
      ['upper case', 'Articles'],
      ['an upper-case letter inside', 'blogPosts'],
      ['a leading digit', '1articles'],
      ['a leading underscore', '_articles'],
      ['a hyphen', 'blog-posts'],
      ['a space', 'blog posts'],
      ['a dot', 'blog.posts'],
      ['non-ASCII letters', 'artículos'],
      ['the empty string', ''],
    ]
    runScenarios(
      () => server,
      invalid.map(
        ([what, name]): Scenario => ({
          name: `invalid_name: ${what}`,
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name, fields: [] },
          status: 400,
          contains: { error: 'invalid_name' },
        }),
      ),
    )

    runScenarios(
      () => server,
      reservedNames.map(
        (name): Scenario => ({
          name: `reserved_name: ${name}`,
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name, fields: [field('title', 'text')] },
          status: 400,
          contains: { error: 'reserved_name', details: { name } },
        }),
      ),
    )

    // SQLite refuses tables named sqlite_…; refused on every dialect so a definition works everywhere.
    runScenarios(
      () => server,
      ['sqlite_notes', 'sqlite_master', 'sqlite_'].map(
        (name): Scenario => ({
          name: `reserved_name: ${name} (SQLite keeps the prefix)`,
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name, fields: [field('title', 'text')] },
          status: 400,
          contains: { error: 'reserved_name' },
        }),
      ),
    )

    // `sqlite` itself too: its created_at index, sqlite__created_at__idx, would begin with sqlite_ (a 500 ddl_error before).
    runScenarios(
      () => server,
      [
        {
          name: 'reserved_name: sqlite (its derived names would begin with sqlite_)',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'sqlite', fields: [field('title', 'text')] },
          status: 400,
          contains: { error: 'reserved_name', details: { name: 'sqlite' } },
        },
      ],
    )

    // Decision (docs/collections.md § Names): `__` separates a collection's name in the names of the objects
    // Plinth derives from it (qx__search is qx's search table, ef__g__h__idx ef's index on g__h), so a
    // collection name may not contain it, although the spec's pattern allows it.
    const doubled = ['qx__search', 'ef__g', 'zz__search__gin', 'notes__', 'a___b', 'x__created_at__idx']
    runScenarios(
      () => server,
      doubled.map(
        (name): Scenario => ({
          name: `reserved_name: ${name} (a double underscore)`,
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name, fields: [field('title', 'text')] },
          status: 400,
          contains: {
            error: 'reserved_name',
            message: expect.stringContaining('double underscores name the objects Plinth derives from a collection'),
            details: { name },
          },
        }),
      ),
    )

    it('names with single underscores, and ending in one, are fine', async () => {
      for (const name of [uniqueName('a_b'), `${uniqueName('trailing')}_`]) {
        const reply = await post({ name, fields: [field('title', 'text', { indexed: true })] })
        expect(reply.status, `${name}: ${reply.text}`).toBe(201)
      }
    })

    it('a name far over 50 characters is invalid_name too, not a generic refusal', async () => {
      const reply = await post({ name: 'a'.repeat(120), fields: [] })
      expect(reply.status).toBe(400)
      expect(reply.body.error).toBe('invalid_name')
    })

    it('a refused name creates nothing', async () => {
      const before = await listedNames(server, owner.token)
      for (const [, name] of invalid) await post({ name, fields: [] })
      for (const name of reservedNames) await post({ name, fields: [] })
      for (const name of [...doubled, 'sqlite']) await post({ name, fields: [] })
      expect(await listedNames(server, owner.token)).toEqual(before)
      for (const name of reservedNames.filter((n) => n !== 'api-keys')) {
        expect((await server.request('GET', `/api/v1/collections/${name}`, { token: owner.token })).status, name).toBe(
          404,
        )
      }
    })

    it('a taken name is 409 already_exists and leaves the first collection as it was', async () => {
      const name = uniqueName('dup')
      const first = await createCollection(server, owner.token, { name, fields: [field('a', 'text')] })
      const again = await post({ name, fields: [field('b', 'integer')] })
      expect(again.status).toBe(409)
      expect(again.body).toMatchObject({ error: 'already_exists', details: { name } })
      const detail = await getCollection(server, owner.token, name)
      expect(detail).toMatchObject({ id: first.id, fields: first.fields, schemaVersion: 1 })
      expect((await listedNames(server, owner.token)).filter((n) => n === name)).toHaveLength(1)
    })
  })

  describe('fields', () => {
    runScenarios(
      () => server,
      systemColumns.map(
        (column): Scenario => ({
          name: `reserved_field: ${column}`,
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'uses_system_column', fields: [field('title', 'text'), field(column, 'text')] },
          status: 400,
          contains: { error: 'reserved_field', details: { field: column, index: 1 } },
        }),
      ),
    )

    // Columns the databases keep for themselves: a 400 on every dialect, never a 500 ddl_error on one.
    runScenarios(
      () => server,
      ['rowid', 'ctid', 'xmin', 'xmax', 'cmin', 'cmax', 'tableoid'].map(
        (column): Scenario => ({
          name: `reserved_field: ${column} (a database column)`,
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'uses_database_column', fields: [field('title', 'text'), field(column, 'integer')] },
          status: 400,
          contains: { error: 'reserved_field', details: { field: column, index: 1 } },
        }),
      ),
    )

    const refused: [string, unknown[], string, Record<string, unknown>?][] = [
      [
        'two fields share a name',
        [field('title', 'text'), field('title', 'integer')],
        'duplicate_field',
        { field: 'title', index: 1 },
      ],
      ['a field name with upper case', [field('Title', 'text')], 'invalid_name', { index: 0 }],
      ['a field name of 51 characters', [field(`f${'x'.repeat(50)}`, 'text')], 'invalid_name', { index: 0 }],
      ['an unknown type', [field('title', 'varchar')], 'invalid_field', { field: 'title' }],
      ['a type in the wrong case', [field('title', 'Text')], 'invalid_field', { field: 'title' }],
      ['enum without enumValues', [field('status', 'enum')], 'invalid_field', { field: 'status' }],
      [
        'enum with an empty enumValues',
        [field('status', 'enum', { enumValues: [] })],
        'invalid_field',
        { field: 'status' },
      ],
      ['multi_enum without enumValues', [field('tags', 'multi_enum')], 'invalid_field', { field: 'tags' }],
      [
        'enumValues on a text field',
        [field('title', 'text', { enumValues: ['a'] })],
        'invalid_field',
        { field: 'title' },
      ],
      [
        'a defaultValue that is not one of enumValues',
        [field('status', 'enum', { enumValues: ['a'], defaultValue: 'b' })],
        'invalid_field',
        { field: 'status' },
      ],
      [
        'a defaultValue of the wrong type',
        [field('n', 'integer', { defaultValue: 'five' })],
        'invalid_field',
        { field: 'n' },
      ],
      ['relation without relationConfig', [field('owner', 'relation')], 'invalid_field', { field: 'owner' }],
      [
        'relation to an unknown collection',
        [
          field('owner', 'relation', {
            relationConfig: { targetCollection: 'no_such_collection', relationType: 'belongsTo' },
          }),
        ],
        'invalid_field',
        { field: 'owner' },
      ],
      [
        'relation with an unknown relationType',
        [field('owner', 'relation', { relationConfig: { targetCollection: 'x', relationType: 'manyToMany' } })],
        'invalid_field',
        { field: 'owner' },
      ],
      ['lookup without lookupConfig', [field('looked', 'lookup')], 'invalid_field', { field: 'looked' }],
      [
        'lookup through a field that is not a relation',
        [
          field('plain', 'text'),
          field('looked', 'lookup', { lookupConfig: { relationField: 'plain', targetField: 'x' } }),
        ],
        'invalid_field',
        { field: 'looked' },
      ],
      [
        'lookup through a missing field',
        [field('looked', 'lookup', { lookupConfig: { relationField: 'nothing', targetField: 'x' } })],
        'invalid_field',
        { field: 'looked' },
      ],
      [
        'a required lookup',
        [field('looked', 'lookup', { required: true, lookupConfig: { relationField: 'nothing', targetField: 'x' } })],
        'invalid_field',
        { field: 'looked' },
      ],
      ['rollup without rollupConfig', [field('total', 'rollup')], 'invalid_field', { field: 'total' }],
      [
        'rollup through a field that is not a relation',
        [
          field('plain', 'text'),
          field('total', 'rollup', { rollupConfig: { relationField: 'plain', function: 'count' } }),
        ],
        'invalid_field',
        { field: 'total' },
      ],
      [
        'rollup with an unknown function',
        [field('total', 'rollup', { rollupConfig: { relationField: 'x', function: 'median' } })],
        'invalid_field',
        { field: 'total' },
      ],
      ['translatable on an integer', [field('n', 'integer', { translatable: true })], 'invalid_field', { field: 'n' }],
      [
        'minLength on an integer',
        [field('n', 'integer', { validationRules: { minLength: 1 } })],
        'invalid_field',
        { field: 'n' },
      ],
      [
        'an unknown validation rule',
        [field('title', 'text', { validationRules: { maxLenght: 3 } })],
        'invalid_field',
        { field: 'title' },
      ],
      [
        'min above max',
        [field('n', 'integer', { validationRules: { min: 5, max: 1 } })],
        'invalid_field',
        { field: 'n' },
      ],
      [
        'a pattern with a backreference',
        [field('title', 'text', { validationRules: { pattern: '(a)\\1' } })],
        'invalid_field',
        { field: 'title' },
      ],
      ['required missing', [{ name: 'title', type: 'text' }], 'invalid_field', { field: 'title' }],
    ]
    runScenarios(
      () => server,
      refused.map(
        ([what, fields, code, details]): Scenario => ({
          name: `${code}: ${what}`,
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'refused_fields', fields },
          status: 400,
          contains: { error: code, ...(details ? { details } : {}) },
        }),
      ),
    )

    // A field definition that is not an object, or has a property no field definition has, is
    // invalid_field naming its index (and the property), never a generic invalid_request or silently dropped.
    const malformed: [string, unknown[], Record<string, unknown>][] = [
      ['a string', ['x'], { field: null, index: 0 }],
      ['null', [null], { field: null, index: 0 }],
      ['a list', [[1]], { field: null, index: 0 }],
      ['a number after a good field', [field('title', 'text'), 7], { field: null, index: 1 }],
      [
        'a misspelt property (uniqe)',
        [{ name: 'a', type: 'text', required: false, uniqe: true }],
        { field: 'a', index: 0, property: 'uniqe' },
      ],
      [
        'an unknown property after a good field',
        [field('title', 'text'), field('n', 'integer', { minimum: 1 })],
        { field: 'n', index: 1, property: 'minimum' },
      ],
      [
        'an unknown property that is null',
        [field('title', 'text', { hint: null })],
        { field: 'title', index: 0, property: 'hint' },
      ],
      [
        'an unknown property inside relationConfig',
        [
          field('owner', 'relation', {
            relationConfig: { targetCollection: 'x', relationType: 'belongsTo', ondelete: 'cascade' },
          }),
        ],
        { field: 'owner', index: 0, property: 'ondelete', path: 'relationConfig' },
      ],
    ]
    runScenarios(
      () => server,
      malformed.map(
        ([what, fields, details]): Scenario => ({
          name: `invalid_field: a field definition that is ${what}`,
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'refused_fields', fields },
          status: 400,
          contains: { error: 'invalid_field', details },
        }),
      ),
    )

    it('an unknown property of a field is refused, not dropped: uniqe does not create a non-unique field', async () => {
      const name = uniqueName('typo')
      const reply = await post({ name, fields: [{ name: 'a', type: 'text', required: false, uniqe: true }] })
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body.message).toContain('uniqe')
      expect(await listedNames(server, owner.token)).not.toContain(name)
    })

    it('a refused field list creates nothing (the name stays free)', async () => {
      for (const [, fields] of malformed) await post({ name: 'refused_fields', fields })
      for (const [, fields] of refused) await post({ name: 'refused_fields', fields })
      for (const column of systemColumns) await post({ name: 'refused_fields', fields: [field(column, 'text')] })
      expect(await listedNames(server, owner.token)).not.toContain('refused_fields')
      const later = await post({ name: 'refused_fields', fields: [field('title', 'text')] })
      expect(later.status, later.text).toBe(201)
    })

    describe('lookup and rollup through real relations', () => {
      let authors: string
      beforeAll(async () => {
        authors = uniqueName('authors')
        await createCollection(server, owner.token, {
          name: authors,
          fields: [field('name', 'text'), field('born', 'integer'), field('bio', 'text', { translatable: true })],
        })
      })
      const belongsTo = () =>
        field('author', 'relation', { relationConfig: { targetCollection: authors, relationType: 'belongsTo' } })
      const hasMany = () =>
        field('authors', 'relation', { relationConfig: { targetCollection: authors, relationType: 'hasMany' } })

      it.each([
        [
          'a lookup through a hasMany relation',
          () => [hasMany(), field('x', 'lookup', { lookupConfig: { relationField: 'authors', targetField: 'name' } })],
        ],
        [
          'a lookup of a field the target lacks',
          () => [
            belongsTo(),
            field('x', 'lookup', { lookupConfig: { relationField: 'author', targetField: 'nickname' } }),
          ],
        ],
        [
          'a lookup of a translatable field',
          () => [belongsTo(), field('x', 'lookup', { lookupConfig: { relationField: 'author', targetField: 'bio' } })],
        ],
        [
          'a rollup through a belongsTo relation',
          () => [belongsTo(), field('x', 'rollup', { rollupConfig: { relationField: 'author', function: 'count' } })],
        ],
        [
          'a sum without a targetField',
          () => [hasMany(), field('x', 'rollup', { rollupConfig: { relationField: 'authors', function: 'sum' } })],
        ],
        [
          'a sum of a text field',
          () => [
            hasMany(),
            field('x', 'rollup', { rollupConfig: { relationField: 'authors', function: 'sum', targetField: 'name' } }),
          ],
        ],
        [
          'a rollup of a field the target lacks',
          () => [
            hasMany(),
            field('x', 'rollup', {
              rollupConfig: { relationField: 'authors', function: 'max', targetField: 'height' },
            }),
          ],
        ],
      ])('invalid_field: %s', async (_what, fields) => {
        const reply = await post({ name: uniqueName('computed'), fields: fields() })
        expect(reply.status, reply.text).toBe(400)
        expect(reply.body).toMatchObject({ error: 'invalid_field', details: { field: 'x' } })
      })

      it('well-formed lookups and rollups are accepted with their derived resultType', async () => {
        const created = await createCollection(server, owner.token, {
          name: uniqueName('computed'),
          fields: [
            belongsTo(),
            hasMany(),
            field('author_born', 'lookup', { lookupConfig: { relationField: 'author', targetField: 'born' } }),
            field('author_count', 'rollup', { rollupConfig: { relationField: 'authors', function: 'count' } }),
            field('born_avg', 'rollup', {
              rollupConfig: { relationField: 'authors', function: 'avg', targetField: 'born' },
            }),
            field('born_max', 'rollup', {
              rollupConfig: { relationField: 'authors', function: 'max', targetField: 'born' },
            }),
          ],
        })
        const resultTypes = Object.fromEntries(
          (created.fields as { name: string; resultType?: string }[]).map((f) => [f.name, f.resultType]),
        )
        expect(resultTypes).toEqual({
          author: undefined,
          authors: undefined,
          author_born: 'integer',
          author_count: 'integer',
          born_avg: 'number',
          born_max: 'integer',
        })
      })
    })
  })

  describe('storage types', () => {
    runScenarios(
      () => server,
      [
        // Every storage type is built; r2_sql's own database cannot be chosen either (collections-r2-sql.test.ts).
        {
          name: 'r2_sql with a databaseId',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'stored_r2', storageType: 'r2_sql', databaseId: 'main', fields: [] },
          status: 400,
          contains: { error: 'invalid_request', details: { databaseId: 'main' } },
        },
        // kv is a table of the project database (collections-kv.test.ts): no other can be chosen.
        {
          name: 'kv with a databaseId',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'stored_kv', storageType: 'kv', databaseId: 'elsewhere', fields: [] },
          status: 400,
          contains: { error: 'invalid_request', details: { databaseId: 'elsewhere' } },
        },
        // durable_object's database is made for it (collections-durable-object.test.ts); none can be chosen or borrowed.
        {
          name: 'durable_object with a databaseId',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'stored_do', storageType: 'durable_object', databaseId: 'main', fields: [] },
          status: 400,
          contains: { error: 'invalid_request', details: { databaseId: 'main' } },
        },
        {
          name: "remote in a collection's own database",
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: {
            name: 'stored_remote',
            storageType: 'remote',
            databaseId: `collection_${'0'.repeat(32)}`,
            fields: [],
          },
          status: 404,
          contains: { error: 'not_found' },
        },
        {
          name: 'an unknown storageType',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'stored_weird', storageType: 'mongo', fields: [] },
          status: 400,
          contains: { error: 'invalid_request' },
        },
        {
          name: 'remote without databaseId',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'stored_remote', storageType: 'remote', fields: [] },
          status: 400,
          contains: { error: 'invalid_request' },
        },
        {
          name: 'remote with a null databaseId',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'stored_remote', storageType: 'remote', databaseId: null, fields: [] },
          status: 400,
          contains: { error: 'invalid_request' },
        },
        {
          name: 'remote with an unknown databaseId',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: {
            name: 'stored_remote',
            storageType: 'remote',
            databaseId: '0123456789abcdef0123456789abcdef',
            fields: [],
          },
          status: 404,
          contains: { error: 'not_found' },
        },
        // The project's own database is not a remote one: labelled remote, the data would still live there.
        {
          name: 'remote with databaseId main (the project database)',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'stored_rmain', storageType: 'remote', databaseId: 'main', fields: [] },
          status: 400,
          contains: { error: 'invalid_request', details: { databaseId: 'main' } },
        },
        {
          name: 'd1 with another databaseId',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'stored_d1', storageType: 'd1', databaseId: '0123456789abcdef0123456789abcdef', fields: [] },
          status: 400,
          contains: { error: 'invalid_request' },
        },
      ],
    )

    it('a refused storage type creates nothing', async () => {
      const names = await listedNames(server, owner.token)
      expect(names.filter((n) => n.startsWith('stored_'))).toEqual([])
    })
  })

  describe('malformed bodies', () => {
    runScenarios(
      () => server,
      [
        {
          name: 'no fields',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'no_fields' },
          status: 400,
          contains: { error: 'invalid_request' },
        },
        {
          name: 'fields not an array',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'no_fields', fields: { title: 'text' } },
          status: 400,
          contains: { error: 'invalid_request' },
        },
        // Unknown top-level properties are refused, naming the key, never dropped.
        {
          name: 'an unknown property',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'no_fields', fields: [], bogus: 1 },
          status: 400,
          contains: { error: 'invalid_request', message: expect.stringContaining('bogus') },
        },
        {
          name: 'a misspelt property',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'no_fields', fields: [], acessControl: { preset: 'public' } },
          status: 400,
          contains: { error: 'invalid_request', message: expect.stringContaining('acessControl') },
        },
        // Decision: a create carries no read-only properties (the server chooses id, schemaVersion and times).
        {
          name: 'a read-only property (id)',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'no_fields', fields: [], id: '0123456789abcdef0123456789abcdef' },
          status: 400,
          contains: { error: 'invalid_request', message: expect.stringContaining('id') },
        },
        {
          name: 'a read-only property (schemaVersion)',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'no_fields', fields: [], schemaVersion: 1 },
          status: 400,
          contains: { error: 'invalid_request', message: expect.stringContaining('schemaVersion') },
        },
        {
          name: 'a name that is not a string',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 42, fields: [] },
          status: 400,
          contains: { error: 'invalid_request' },
        },
        {
          name: 'no name',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { fields: [] },
          status: 400,
          contains: { error: 'invalid_request' },
        },
        {
          name: 'accessControl with an unknown preset',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'bad_access', fields: [], accessControl: { preset: 'everyone' } },
          status: 400,
          contains: { error: 'invalid_request' },
        },
        {
          name: 'accessControl with an unknown key',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          body: { name: 'bad_access', fields: [], accessControl: { preset: 'team', public: true } },
          status: 400,
          contains: { error: 'invalid_request' },
        },
        {
          name: 'body is not JSON',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => owner.token,
          rawBody: '{"name":',
          headers: { 'content-type': 'application/json' },
          status: 400,
          contains: { error: 'invalid_request' },
        },
      ],
    )

    it('refused bodies created nothing', async () => {
      expect(await listedNames(server, owner.token)).not.toContain('no_fields')
    })
  })

  describe('permission schema/*:create', () => {
    runScenarios(
      () => server,
      [
        {
          name: 'anonymous',
          method: 'POST',
          path: '/api/v1/collections',
          body: { name: 'by_anonymous', fields: [] },
          status: 401,
          contains: { error: 'unauthorized' },
        },
        {
          name: 'a viewer',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => viewer.token,
          body: { name: 'by_viewer', fields: [] },
          status: 403,
          contains: { error: 'forbidden' },
        },
        {
          name: 'an editor (collections/* is not schema/*)',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => editor.token,
          body: { name: 'by_editor', fields: [] },
          status: 403,
          contains: { error: 'forbidden' },
        },
        // The guard runs before validation: an unauthorised caller learns nothing from a 400.
        {
          name: 'a viewer with an invalid body',
          method: 'POST',
          path: '/api/v1/collections',
          as: () => viewer.token,
          body: { name: 'Bad Name' },
          status: 403,
          contains: { error: 'forbidden' },
        },
        {
          name: 'a bad token',
          method: 'POST',
          path: '/api/v1/collections',
          as: 'not-a-token',
          body: { name: 'by_nobody', fields: [] },
          status: 401,
          contains: { error: 'unauthorized' },
        },
      ],
    )

    it('refused callers created nothing', async () => {
      const names = await listedNames(server, owner.token)
      expect(names.filter((n) => n.startsWith('by_'))).toEqual([])
    })

    it('a custom role holding schema/*:create may create, and nothing else on schema', async () => {
      const builder = await accountWithGrants(server, owner.token, [{ resource: 'schema/*', action: 'create' }])
      const name = uniqueName('built')
      const reply = await post({ name, fields: [field('title', 'text')] }, builder.token)
      expect(reply.status, reply.text).toBe(201)
      expect(
        (
          await server.request('PATCH', `/api/v1/collections/${name}`, {
            token: builder.token,
            body: { fields: reply.body.data.fields },
          })
        ).status,
      ).toBe(403)
      expect((await server.request('DELETE', `/api/v1/collections/${name}`, { token: builder.token })).status).toBe(403)
    })

    it('an admin may create', async () => {
      const admin = await createAccount(server, owner.token, { role: 'admin' })
      expect((await post({ name: uniqueName('by_admin'), fields: [] }, admin.token)).status).toBe(201)
    })
  })

  it('creates of one name at the same time: one is made, the rest are 409, and the table takes records', async () => {
    const name = uniqueName('raced')
    const replies = await Promise.all(Array.from({ length: 8 }, () => post({ name, fields: [field('title', 'text')] })))
    expect(replies.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409])
    for (const r of replies.filter((r) => r.status === 409)) expect(r.body.error).toBe('already_exists')
    expect((await listedNames(server, owner.token)).filter((n) => n === name)).toHaveLength(1)
    const written = await server.request('POST', `/api/v1/collections/${name}/records`, {
      token: owner.token,
      body: { title: 'one' },
    })
    expect(written.status, written.text).toBe(201)
  })

  describe('ddl_error', () => {
    it('a CREATE TABLE the database refuses is 500 ddl_error, and no collection is registered', async () => {
      const name = uniqueName('clash')
      const handle = await server.app.registry.get(server.app.defaultProject.id)
      // A table of that name with a row already exists in the project database (made behind the API's
      // back; an empty one is what a killed create leaves, and is cleared: collections-create-kill).
      await sql`create table ${tableIdentifier(handle, name)} (squatter text)`.execute(handle.db)
      await sql`insert into ${tableIdentifier(handle, name)} (squatter) values ('here first')`.execute(handle.db)
      try {
        const reply = await post({ name, fields: [field('title', 'text'), field('n', 'integer', { unique: true })] })
        expect(reply.status, reply.text).toBe(500)
        expect(reply.body).toMatchObject({ error: 'ddl_error', details: { reason: expect.any(String) } })
        expect(await listedNames(server, owner.token)).not.toContain(name)
        const detail = await server.request('GET', `/api/v1/collections/${name}`, { token: owner.token })
        expect(detail.status).toBe(404)
        expect(detail.body.error).toBe('collection_not_found')
        expect(
          (await server.request('GET', `/api/v1/collections/${name}/records`, { token: owner.token })).body.error,
        ).toBe('collection_not_found')
      } finally {
        await sql`drop table ${tableIdentifier(handle, name)}`.execute(handle.db)
      }
      // Nothing half-made remains: once the squatter is gone the name is free (not 409) and works.
      const created = await createCollection(server, owner.token, { name, fields: [field('title', 'text')] })
      expect(created.schemaVersion).toBe(1)
      await createRecord(server, owner.token, name, { title: 'fine' })
    })
  })
})

describe('GET /api/v1/collections and /api/v1/collections/:name', () => {
  let open: string
  let team: string
  let secret: string
  beforeAll(async () => {
    open = uniqueName('vis_public')
    team = uniqueName('vis_team')
    secret = uniqueName('vis_private')
    await createCollection(server, owner.token, {
      name: open,
      accessControl: { preset: 'public' },
      fields: [field('title', 'text')],
    })
    await createCollection(server, owner.token, { name: team, fields: [field('title', 'text')] })
    await createCollection(server, owner.token, {
      name: secret,
      accessControl: { preset: 'private' },
      fields: [field('title', 'text')],
    })
  })

  const isPublic = (c: { accessControl: { preset?: string } | null }) => c.accessControl?.preset === 'public'
  /** The sorted names of the project's collections (as the owner sees them all) that match. */
  async function namesWhere(match: (c: any) => boolean): Promise<string[]> {
    const all = await server.request('GET', '/api/v1/collections', { token: owner.token })
    return (all.body.data as any[])
      .filter(match)
      .map((c: { name: string }) => c.name)
      .sort()
  }

  it('lists in { data } with the collection shape', async () => {
    const reply = await server.request('GET', '/api/v1/collections', { token: owner.token })
    expect(reply.status).toBe(200)
    expect(Object.keys(reply.body)).toEqual(['data'])
    const entry = (reply.body.data as any[]).find((c) => c.name === team)
    expect(Object.keys(entry).sort()).toEqual([
      'accessControl',
      'createdAt',
      'databaseId',
      'fields',
      'id',
      'indexes',
      'name',
      'projectId',
      'schemaVersion',
      'storageType',
      'updatedAt',
    ])
    expect(entry).toMatchObject({
      name: team,
      storageType: 'd1',
      databaseId: 'main',
      schemaVersion: 1,
      accessControl: null,
    })
  })

  it('the owner and a viewer (collections/* read) see every collection', async () => {
    for (const token of [owner.token, viewer.token]) {
      expect(await listedNames(server, token)).toEqual(expect.arrayContaining([open, team, secret]))
    }
    expect((await server.request('GET', `/api/v1/collections/${secret}`, { token: viewer.token })).status).toBe(200)
  })

  it('a role with read on one collection sees that one (and public ones) only', async () => {
    const reader = await accountWithGrants(server, owner.token, [{ resource: `collections/${team}`, action: 'read' }])
    expect((await listedNames(server, reader.token)).sort()).toEqual(
      await namesWhere((c) => c.name === team || isPublic(c)),
    )
    expect((await server.request('GET', `/api/v1/collections/${team}`, { token: reader.token })).status).toBe(200)
    const hidden = await server.request('GET', `/api/v1/collections/${secret}`, { token: reader.token })
    expect(hidden.status).toBe(404)
    expect(hidden.body.error).toBe('collection_not_found')
  })

  it('a role with schema/*:read sees every collection', async () => {
    const architect = await accountWithGrants(server, owner.token, [{ resource: 'schema/*', action: 'read' }])
    expect(await listedNames(server, architect.token)).toEqual(expect.arrayContaining([open, team, secret]))
  })

  it('a custom role without grants sees only public collections; the others are 404 as if missing', async () => {
    const nobody = await accountWithGrants(server, owner.token, [])
    const names = await listedNames(server, nobody.token)
    expect(names).toContain(open)
    expect(names.sort()).toEqual(await namesWhere(isPublic))
    for (const name of [team, secret]) {
      const reply = await server.request('GET', `/api/v1/collections/${name}`, { token: nobody.token })
      expect(reply.status).toBe(404)
      // Hidden and missing answer alike, down to the message shape.
      const missing = await server.request('GET', '/api/v1/collections/no_such_thing', { token: nobody.token })
      expect(reply.body).toEqual({ ...missing.body, message: missing.body.message.replace('no_such_thing', name) })
    }
  })

  it('anonymous callers see public collections only', async () => {
    const names = await listedNames(server)
    expect(names).toContain(open)
    expect(names.sort()).toEqual(await namesWhere(isPublic))
    expect((await server.request('GET', `/api/v1/collections/${open}`, {})).status).toBe(200)
    // Without a credential, a collection public may not read asks for one (decision 012), like a missing one.
    const hidden = await server.request('GET', `/api/v1/collections/${team}`, {})
    expect(hidden.status).toBe(401)
    expect(hidden.body.error).toBe('unauthorized')
  })

  runScenarios(
    () => server,
    [
      {
        name: 'unknown collection',
        method: 'GET',
        path: '/api/v1/collections/no_such_collection',
        as: () => owner.token,
        status: 404,
        contains: { error: 'collection_not_found' },
      },
      {
        name: 'unknown collection, anonymous',
        method: 'GET',
        path: '/api/v1/collections/no_such_collection',
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'a bad token is 401, not a list',
        method: 'GET',
        path: '/api/v1/collections',
        as: 'not-a-token',
        status: 401,
        contains: { error: 'unauthorized' },
      },
    ],
  )

  it('detail: columnStatuses for every system column and stored field, none for computed fields; policyKey', async () => {
    const kind = server.app.registry.kind
    const types = columnTypes[kind]
    const target = uniqueName('col_target')
    await createCollection(server, owner.token, { name: target, fields: [field('score', 'integer')] })
    const name = uniqueName('col_status')
    const created = await createCollection(server, owner.token, {
      name,
      fields: [
        field('title', 'text'),
        field('count', 'integer'),
        field('done', 'boolean'),
        field('data', 'json'),
        field('price', 'decimal'),
        field('ratio', 'number'),
        field('one', 'relation', { relationConfig: { targetCollection: target, relationType: 'belongsTo' } }),
        field('many', 'relation', { relationConfig: { targetCollection: target, relationType: 'hasMany' } }),
        field('one_score', 'lookup', { lookupConfig: { relationField: 'one', targetField: 'score' } }),
        field('many_count', 'rollup', { rollupConfig: { relationField: 'many', function: 'count' } }),
      ],
    })
    const reply = await server.request('GET', `/api/v1/collections/${name}`, { token: owner.token })
    expect(reply.status).toBe(200)
    expect(Object.keys(reply.body)).toEqual(['data'])
    const detail = reply.body.data
    expect(detail).toMatchObject({
      id: created.id,
      name,
      fields: created.fields,
      schemaVersion: 1,
      policyKey: `collections/${name}`,
    })
    expect(detail.columnStatuses).toEqual([
      ...systemColumns.map((c) => ({ name: c, exists: true, type: types[c] })),
      { name: 'title', exists: true, type: types.text },
      { name: 'count', exists: true, type: types.integer },
      { name: 'done', exists: true, type: types.boolean },
      { name: 'data', exists: true, type: types.json },
      { name: 'price', exists: true, type: types.decimal },
      { name: 'ratio', exists: true, type: types.number },
      { name: 'one', exists: true, type: types.belongsTo },
      { name: 'many', exists: true, type: types.hasMany },
    ])
  })

  it("detail: a column dropped behind the API's back shows exists false", async () => {
    const name = uniqueName('col_drift')
    await createCollection(server, owner.token, { name, fields: [field('keep', 'integer'), field('lose', 'integer')] })
    const handle = await server.app.registry.get(server.app.defaultProject.id)
    await sql`alter table ${tableIdentifier(handle, name)} drop column lose`.execute(handle.db)
    const detail = await getCollection(server, owner.token, name)
    expect(detail.columnStatuses.slice(-2)).toEqual([
      { name: 'keep', exists: true, type: columnTypes[server.app.registry.kind].integer },
      { name: 'lose', exists: false, type: '' },
    ])
  })
})
