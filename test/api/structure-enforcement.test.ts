import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import {
  client,
  createCollection,
  createRecord,
  expectError,
  freshName,
  listAll,
  readRecord,
  recordsPath,
} from './records-fixtures.js'
import { placeShape } from './structure-support.js'

let server: TestServer
let owner: Account
const { post, patch } = client(() => server)

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
})

const jsonField = (structure: unknown, extra: Record<string, unknown> = {}) => ({
  name: 'meta',
  type: 'json',
  required: false,
  structure,
  ...extra,
})
const createWith = (fields: unknown[]) =>
  server.request('POST', '/api/v1/collections', { token: owner.token, body: { name: freshName('def'), fields } })

describe('structure definitions (POST and PATCH /collections)', () => {
  const bad: [string, unknown, string][] = [
    ['not an object', 'strict', 'structure'],
    ['an unknown enforcement', { enforcement: 'loud', shape: { type: 'string' } }, 'structure.enforcement'],
    ['no shape', { enforcement: 'warn' }, 'structure.shape'],
    ['an unknown structure key', { shape: { type: 'string' }, extra: 1 }, 'structure.extra'],
    ['an unknown shape type', { shape: { type: 'date' } }, 'structure.shape.type'],
    [
      'a nested bad type',
      { shape: { type: 'object', entries: { biome: { type: 'list', items: { type: 'enum' } } } } },
      'structure.shape.entries.biome.items.values',
    ],
    ['an empty enum', { shape: { type: 'enum', values: [] } }, 'structure.shape.values'],
    [
      'a repeated enum value',
      { shape: { type: 'enum', values: ['a', { value: 'a' }] } },
      'structure.shape.values.1.value',
    ],
    ['a non-string enum value', { shape: { type: 'enum', values: [{ value: 3 }] } }, 'structure.shape.values.0.value'],
    [
      'a label map with a bad locale',
      { shape: { type: 'enum', values: [{ value: 'a', label: { 'not a locale': 'x' } }] } },
      'structure.shape.values.0.label.not a locale',
    ],
    ['a label of the wrong type', { shape: { type: 'string', label: 5 } }, 'structure.shape.label'],
    [
      'map keys that are not an enum',
      { shape: { type: 'map', keys: { type: 'string' }, values: { type: 'number' } } },
      'structure.shape.keys.type',
    ],
    [
      'a property of another shape type',
      { shape: { type: 'list', items: { type: 'string' }, entries: {} } },
      'structure.shape.entries',
    ],
    [
      'additional that is not a boolean',
      { shape: { type: 'object', entries: {}, additional: 'yes' } },
      'structure.shape.additional',
    ],
  ]
  for (const [name, structure, path] of bad) {
    it(`refuses ${name} (400 invalid_field naming ${path})`, async () => {
      const reply = await createWith([jsonField(structure)])
      expectError(reply, 400, 'invalid_field')
      expect(reply.body.details).toMatchObject({ field: 'meta', path })
      expect(reply.body.message).toContain(path)
    })
  }

  it('refuses a shape nested deeper than 16 levels', async () => {
    let shape: unknown = { type: 'string' }
    for (let i = 0; i < 17; i++) shape = { type: 'list', items: shape }
    expectError(await createWith([jsonField({ shape })]), 400, 'invalid_field')
  })

  it('refuses structure on a field that is not json, and a default that does not match the shape', async () => {
    expectError(
      await createWith([{ name: 'title', type: 'text', required: false, structure: { shape: { type: 'string' } } }]),
      400,
      'invalid_field',
    )
    const reply = await createWith([
      jsonField({ enforcement: 'off', shape: { type: 'enum', values: ['a'] } }, { defaultValue: 'b' }),
    ])
    expectError(reply, 400, 'invalid_field')
    expect(reply.body.message).toContain('defaultValue')
  })

  it('stores the structure normalised and answers it back (string shorthand, defaults filled in)', async () => {
    const reply = await createWith([
      jsonField({
        shape: {
          type: 'object',
          entries: { kind: { type: 'enum', values: ['a', { value: 'b', label: { de: 'Be' } }] } },
        },
      }),
    ])
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.data.fields[0].structure).toEqual({
      enforcement: 'warn',
      shape: {
        type: 'object',
        additional: false,
        entries: { kind: { type: 'enum', values: [{ value: 'a' }, { value: 'b', label: { de: 'Be' } }] } },
      },
    })
    const read = await server.request('GET', `/api/v1/collections/${reply.body.data.name}`, { token: owner.token })
    expect(read.body.data.fields[0].structure).toEqual(reply.body.data.fields[0].structure)
  })

  it('PATCH may change a field’s structure, raising schemaVersion; a type change is still refused', async () => {
    const name = await createCollection(server, owner.token, freshName('evolve'), [
      jsonField({ enforcement: 'warn', shape: { type: 'enum', values: ['a'] } }),
    ])
    const widened = await patch(`/api/v1/collections/${name}`, owner.token, {
      fields: [jsonField({ enforcement: 'off', shape: { type: 'enum', values: ['a', 'b'] } })],
    })
    expect(widened.status, widened.text).toBe(200)
    expect(widened.body.data).toMatchObject({
      schemaVersion: 2,
      fields: [{ structure: { enforcement: 'off', shape: { values: [{ value: 'a' }, { value: 'b' }] } } }],
    })
    const removed = await patch(`/api/v1/collections/${name}`, owner.token, {
      fields: [{ name: 'meta', type: 'json', required: false }],
    })
    expect(removed.status, removed.text).toBe(200)
    expect(removed.body.data.fields[0]).not.toHaveProperty('structure')
    // A change no kind of change covers (json → text) is still refused.
    const retyped = await patch(`/api/v1/collections/${name}`, owner.token, {
      fields: [{ name: 'meta', type: 'text', required: false }],
    })
    expectError(retyped, 400, 'invalid_field')
    const bad = await patch(`/api/v1/collections/${name}`, owner.token, {
      fields: [jsonField({ shape: { type: 'nope' } })],
    })
    expectError(bad, 400, 'invalid_field')
    const after = await server.request('GET', `/api/v1/collections/${name}`, { token: owner.token })
    expect(after.body.data.schemaVersion).toBe(3)
  })
})

describe('enforcement on record writes', () => {
  let strict: string
  let warn: string
  let off: string
  beforeAll(async () => {
    strict = await createCollection(server, owner.token, freshName('strict'), [
      jsonField({ enforcement: 'strict', shape: placeShape }),
    ])
    warn = await createCollection(server, owner.token, freshName('warn'), [
      jsonField({ enforcement: 'warn', shape: placeShape }),
    ])
    off = await createCollection(server, owner.token, freshName('off'), [
      jsonField({ enforcement: 'off', shape: placeShape }),
    ])
  })

  it('strict: a value matching the shape is written', async () => {
    const meta = { biome: ['Forest', 'Tundra'], size: 4, kind: 'village', scores: { red: 1, green: 0.5 } }
    const record = await createRecord(server, owner.token, strict, { meta })
    expect(record.meta).toEqual(meta)
  })

  const refusals: [string, unknown, string][] = [
    ['a wrong enum value in a list', { biome: ['Forest', 'Fores'] }, 'at biome[1]: "Fores" is not an allowed value'],
    ['an unknown key', { Biome: ['Forest'] }, 'at $: unknown key "Biome"; did you mean "biome"?'],
    ['a wrong type', { size: '3' }, 'at size: expected a number, got a string'],
    ['a map key not allowed', { scores: { gren: 1 } }, 'at scores{key}: "gren" is not an allowed key'],
    ['a null list item', { biome: [null] }, 'at biome[0]: expected one of the allowed values (a string), got null'],
    ['not an object at all', ['Forest'], 'at $: expected an object, got a list'],
  ]
  for (const [name, meta, message] of refusals) {
    it(`strict refuses ${name} with 422 validation_error naming the path; nothing is stored`, async () => {
      const before = (await listAll(server, owner.token, strict)).length
      const reply = await post(recordsPath(strict), owner.token, { meta })
      expectError(reply, 422, 'validation_error')
      expect(reply.body.message).toContain(message)
      expect(reply.body.details).toMatchObject({ field: 'meta' })
      expect((await listAll(server, owner.token, strict)).length).toBe(before)
    })
  }

  it('strict checks updates too, JSON operators included, and leaves the record as it was', async () => {
    const record = await createRecord(server, owner.token, strict, { meta: { biome: ['Forest'] } })
    expectError(
      await patch(recordsPath(strict, record.id), owner.token, { meta: { kind: 'town' } }),
      422,
      'validation_error',
    )
    const pushed = await patch(recordsPath(strict, record.id), owner.token, { $push: { 'meta.biome': 'Jungle' } })
    expectError(pushed, 422, 'validation_error')
    expect(pushed.body.message).toContain('biome[1]')
    expect(await readRecord(server, owner.token, strict, record.id)).toMatchObject({
      meta: { biome: ['Forest'] },
      _version: 1,
    })
    const ok = await patch(recordsPath(strict, record.id), owner.token, { $push: { 'meta.biome': 'Desert' } })
    expect(ok.status, ok.text).toBe(200)
    expect(ok.body.meta).toEqual({ biome: ['Forest', 'Desert'] })
  })

  it('warn: the value is written as sent, and the server log names the field and path (not the value)', async () => {
    const reply = await post(recordsPath(warn), owner.token, { meta: { biome: ['Forest', 'Secret-Fores'] } })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.meta).toEqual({ biome: ['Forest', 'Secret-Fores'] })
    const line = server.logs.find((l) => l.includes('does not match its structure') && l.includes(warn))
    expect(line).toBeDefined()
    expect(JSON.parse(line!)).toMatchObject({
      level: 40,
      collection: warn,
      field: 'meta',
      path: 'biome[1]',
      code: 'enum',
    })
    expect(line).not.toContain('Secret-Fores')
  })

  it('off: written as sent, nothing logged', async () => {
    const reply = await post(recordsPath(off), owner.token, { meta: { biome: 'not a list' } })
    expect(reply.status, reply.text).toBe(201)
    expect(server.logs.some((l) => l.includes('does not match its structure') && l.includes(off))).toBe(false)
  })
})
