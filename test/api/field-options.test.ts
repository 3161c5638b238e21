import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, setGrants, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'
import { client, createCollection, expectError, freshName } from './records-fixtures.js'
import { placeShape } from './structure-support.js'

let server: TestServer
let owner: Account
let viewer: Account
let narrow: Account
const { get } = client(() => server)

const places = 'places'
const openPlaces = 'open_places'
const secret = 'secret_places'

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
  await createCollection(server, owner.token, places, [
    { name: 'title', type: 'text', required: false },
    { name: 'status', type: 'enum', required: false, label: 'Status', enumValues: ['open', 'closed'] },
    { name: 'tags', type: 'multi_enum', required: false, enumValues: ['a', 'b'] },
    { name: 'meta', type: 'json', required: false, structure: { enforcement: 'off', shape: placeShape } },
    {
      name: 'notes',
      type: 'json',
      required: false,
      structure: { enforcement: 'warn', shape: { type: 'list', items: { type: 'string' } } },
    },
    { name: 'plain', type: 'json', required: false },
  ])
  await createCollection(
    server,
    owner.token,
    openPlaces,
    [{ name: 'status', type: 'enum', required: false, enumValues: ['x'] }],
    { accessControl: { preset: 'public' } },
  )
  await createCollection(server, owner.token, secret, [
    { name: 'status', type: 'enum', required: false, enumValues: ['x'] },
  ])
  // A role that reads `places` but only two of its columns, and nothing of `secret_places`.
  const role = (
    await server.request('POST', '/api/v1/roles', {
      token: owner.token,
      body: { name: 'narrow', description: 'two columns' },
    })
  ).body.data.name
  await setGrants(server, owner.token, role, [
    { resource: `collections/${places}`, action: 'read', fields: ['title', 'status'] },
  ])
  narrow = await createAccount(server, owner.token, { role })
})
afterAll(async () => {
  await server?.stop()
})

const fieldPath = (field: string, query = '', collection = places) =>
  `/api/v1/collections/${collection}/fields/${field}/options${query}`

describe('GET …/fields/:field/options', () => {
  it('an enum column: one option set at $, labelled with the field', async () => {
    const reply = await get(fieldPath('status'), viewer.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      data: {
        field: 'status',
        type: 'enum',
        optionSets: [
          {
            path: '$',
            label: 'Status',
            multiple: false,
            values: [
              { value: 'open', label: 'open' },
              { value: 'closed', label: 'closed' },
            ],
          },
        ],
      },
    })
  })

  it('a multi_enum column: at $, multiple', async () => {
    const reply = await get(fieldPath('tags'), viewer.token)
    expect(reply.body.data.optionSets).toEqual([
      {
        path: '$',
        label: 'tags',
        multiple: true,
        values: [
          { value: 'a', label: 'a' },
          { value: 'b', label: 'b' },
        ],
      },
    ])
  })

  it('a json field: every enum of its structure at its path; list items and map keys are multiple', async () => {
    const reply = await get(fieldPath('meta', '?locale=en'), viewer.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toEqual({
      field: 'meta',
      type: 'json',
      optionSets: [
        {
          path: 'biome[]',
          label: 'Biomes',
          multiple: true,
          values: [
            { value: 'Forest', label: 'Forest' },
            { value: 'Desert', label: 'Desert' },
            { value: 'Tundra', label: 'Tundra' },
          ],
        },
        {
          path: 'kind',
          label: 'kind',
          multiple: false,
          values: [
            { value: 'city', label: 'city' },
            { value: 'village', label: 'village' },
          ],
        },
        {
          path: 'scores{key}',
          label: 'scores',
          multiple: true,
          values: [
            { value: 'red', label: 'red' },
            { value: 'green', label: 'green' },
          ],
        },
      ],
    })
  })

  it('labels follow the locale: exact, then its language, then the default locale, then the value', async () => {
    const de = (await get(fieldPath('meta', '?locale=de'), viewer.token)).body.data.optionSets[0]
    expect(de).toMatchObject({
      label: 'Biome',
      values: [
        { value: 'Forest', label: 'Wald' },
        { value: 'Desert', label: 'Desert' },
        { value: 'Tundra', label: 'Tundra' },
      ],
    })
    const deAt = (await get(fieldPath('meta', '?locale=de-AT'), viewer.token)).body.data.optionSets[0]
    expect(deAt).toEqual(de)
    const fr = (await get(fieldPath('meta', '?locale=fr'), viewer.token)).body.data.optionSets[0]
    expect(fr).toMatchObject({
      label: 'Biomes',
      values: [{ label: 'Forest' }, { label: 'Desert' }, { label: 'Tundra' }],
    })
    // Without a locale, the project's default locale decides.
    const changed = await server.request('PATCH', '/api/v1/settings', {
      token: owner.token,
      body: { 'i18n.defaultLocale': 'de' },
    })
    expect(changed.status, changed.text).toBe(200)
    try {
      const byDefault = (await get(fieldPath('meta'), viewer.token)).body.data.optionSets[0]
      expect(byDefault).toMatchObject({ label: 'Biome' })
      expect(byDefault.values[0]).toEqual({ value: 'Forest', label: 'Wald' })
      expect((await get(fieldPath('meta', '?locale=fr'), viewer.token)).body.data.optionSets[0]).toMatchObject({
        label: 'Biome',
      })
    } finally {
      await server.request('PATCH', '/api/v1/settings', { token: owner.token, body: { 'i18n.defaultLocale': 'en' } })
    }
  })

  it('a field with a structure but no enum, or no structure at all, has no option sets', async () => {
    expect((await get(fieldPath('notes'), viewer.token)).body.data).toEqual({
      field: 'notes',
      type: 'json',
      optionSets: [],
    })
    expect((await get(fieldPath('title'), viewer.token)).body.data).toEqual({
      field: 'title',
      type: 'text',
      optionSets: [],
    })
  })
})

describe('GET …/options (several fields)', () => {
  it('every readable field with option sets; unconstrained fields are left out', async () => {
    const reply = await get(`/api/v1/collections/${places}/options`, viewer.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.collection).toBe(places)
    expect(reply.body.data.fields.map((f: any) => f.field)).toEqual(['status', 'tags', 'meta'])
    expect(reply.body.data.fields[2].optionSets.map((s: any) => s.path)).toEqual(['biome[]', 'kind', 'scores{key}'])
  })

  it('the fields asked for, in that order, localised', async () => {
    const reply = await get(`/api/v1/collections/${places}/options?fields=meta,title,status&locale=de`, viewer.token)
    expect(reply.body.data.fields.map((f: any) => f.field)).toEqual(['meta', 'status'])
    expect(reply.body.data.fields[0].optionSets[0].values[0]).toEqual({ value: 'Forest', label: 'Wald' })
  })

  it('a field allowlist hides the other columns: they are left out, or 404 NOT_FOUND when named', async () => {
    const all = await get(`/api/v1/collections/${places}/options`, narrow.token)
    expect(all.body.data.fields.map((f: any) => f.field)).toEqual(['status'])
    expectError(await get(`/api/v1/collections/${places}/options?fields=status,meta`, narrow.token), 404, 'NOT_FOUND')
    expectError(await get(fieldPath('meta'), narrow.token), 404, 'NOT_FOUND')
    expect((await get(fieldPath('status'), narrow.token)).status).toBe(200)
  })
})

describe('field options errors', () => {
  runScenarios(
    () => server,
    [
      {
        name: 'no such collection',
        as: () => viewer.token,
        method: 'GET',
        path: fieldPath('status', '', 'nope'),
        status: 404,
        contains: { error: 'COLLECTION_NOT_FOUND' },
      },
      {
        name: 'a collection the caller may not read is as missing',
        as: () => narrow.token,
        method: 'GET',
        path: fieldPath('status', '', secret),
        status: 404,
        contains: { error: 'COLLECTION_NOT_FOUND' },
      },
      // Without a credential, a collection public may not read asks for one (decision 012).
      {
        name: 'anonymous, a team collection',
        method: 'GET',
        path: fieldPath('status'),
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'anonymous, several fields',
        method: 'GET',
        path: `/api/v1/collections/${places}/options`,
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'anonymous, a public collection',
        method: 'GET',
        path: fieldPath('status', '', openPlaces),
        status: 200,
        contains: { data: { field: 'status' } },
      },
      {
        name: 'no such field',
        as: () => viewer.token,
        method: 'GET',
        path: fieldPath('nope'),
        status: 404,
        contains: { error: 'NOT_FOUND' },
      },
      {
        name: 'no such field among several',
        as: () => viewer.token,
        method: 'GET',
        path: `/api/v1/collections/${places}/options?fields=status,nope`,
        status: 404,
        contains: { error: 'NOT_FOUND' },
      },
      {
        name: 'a malformed locale',
        as: () => viewer.token,
        method: 'GET',
        path: fieldPath('status', '?locale=not_a_locale!'),
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )

  it('a fresh collection name is 404 for everyone alike', async () => {
    const name = freshName('ghost')
    expectError(await get(fieldPath('status', '', name), owner.token), 404, 'COLLECTION_NOT_FOUND')
  })
})
