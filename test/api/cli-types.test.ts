import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../support/cli-process.js'
import { fieldTypes } from '../../src/modules/collections/field-types/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { uploadViaToken } from './files-support.js'

/**
 * `plinth types` against a real instance: a project with every field type, the CLI run as a child process,
 * its output compiled by the repository's TypeScript under --strict together with a usage file that assigns
 * the API's real answers to the generated types and asserts some field types exactly, with
 * `@ts-expect-error` on wrong uses (so types gone loose fail the compile too).
 */

const tsc = new URL('../../node_modules/typescript/bin/tsc', import.meta.url).pathname
let server: TestServer
let owner: Account
const dir = mkdtempSync(join(tmpdir(), 'plinth-cli-types-'))

const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, { PLINTH_URL: server.url, PLINTH_TOKEN: owner.token, ...env })

const sdkSource = new URL('../../packages/client/src/index.ts', import.meta.url).pathname

/** Compiles `files` (name → source) in a fresh directory beside the generated types under --strict. */
function compile(types: string, files: Record<string, string>) {
  const project = mkdtempSync(join(dir, 'tsc-'))
  writeFileSync(join(project, 'plinth-types.ts'), types)
  for (const [name, source] of Object.entries(files)) writeFileSync(join(project, name), source)
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noUncheckedIndexedAccess: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        target: 'es2022',
        module: 'es2022',
        moduleResolution: 'bundler',
        // DOM: the SDK's source, which the usage file imports, runs in browsers too.
        lib: ['es2022', 'dom'],
        types: [],
        skipLibCheck: true,
        paths: { '@plinth/client': [sdkSource] },
      },
      files: ['plinth-types.ts', ...Object.keys(files)],
    }),
  )
  return spawnSync(process.execPath, [tsc, '-p', join(project, 'tsconfig.json')], {
    encoding: 'utf8',
    timeout: 120_000,
  })
}

const f = (name: string, type: string, extra: object = {}) => ({ name, type, required: false, ...extra })
const everyField = [
  f('title', 'text', { required: true }),
  f('greeting', 'text', { translatable: true }),
  f('body', 'richtext'),
  f('contact', 'email'),
  f('site', 'url'),
  f('phone', 'phone'),
  f('handle', 'slug'),
  f('token', 'uuid'),
  f('seats', 'integer', { required: true }),
  f('price', 'decimal'),
  f('ratio', 'number'),
  f('done', 'boolean'),
  f('due', 'date'),
  f('at', 'datetime'),
  f('status', 'enum', { required: true, enumValues: ['open', 'closed', "it's done"] }),
  f('tags', 'multi_enum', { enumValues: ['red', 'green'] }),
  f('meta', 'json'),
  f('shaped', 'json', {
    structure: {
      enforcement: 'strict',
      shape: {
        type: 'object',
        entries: {
          kind: { type: 'enum', values: ['city', 'village'] },
          sizes: { type: 'list', items: { type: 'number' } },
          scores: { type: 'map', keys: { type: 'enum', values: ['a', 'b'] }, values: { type: 'number' } },
        },
      },
    },
  }),
  f('team', 'relation', { relationConfig: { targetCollection: 'teams', relationType: 'belongsTo' } }),
  f('crews', 'relation', { relationConfig: { targetCollection: 'teams', relationType: 'hasMany' } }),
  f('assignee', 'relation', { relationConfig: { targetCollection: 'users', relationType: 'belongsTo' } }),
  f('watchers', 'relation', { relationConfig: { targetCollection: 'users', relationType: 'hasMany' } }),
  f('doc', 'file'),
  f('where', 'geo'),
  f('team_name', 'lookup', { lookupConfig: { relationField: 'team', targetField: 'name' } }),
  f('team_tier', 'lookup', { lookupConfig: { relationField: 'team', targetField: 'tier' } }),
  f('crew_count', 'rollup', { rollupConfig: { relationField: 'crews', function: 'count' } }),
  f('crew_max', 'rollup', { rollupConfig: { relationField: 'crews', function: 'max', targetField: 'size' } }),
]

let plain: unknown
let expanded: unknown

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const as = { token: owner.token }
  const create = async (body: object) => {
    const reply = await server.request('POST', '/api/v1/collections', { ...as, body })
    expect(reply.status, reply.text).toBe(201)
  }
  await create({
    name: 'teams',
    fields: [
      f('name', 'text', { required: true }),
      f('size', 'integer'),
      f('tier', 'enum', { enumValues: ['gold', 'tin'] }),
    ],
  })
  await create({ name: 'every', fields: everyField })
  // Named like the global Record type: its interface must not shadow it.
  await create({ name: 'record', fields: [f('note', 'text')] })
  const team = await server.request('POST', '/api/v1/collections/teams/records', {
    ...as,
    body: { name: 'Core', size: 4, tier: 'gold' },
  })
  expect(team.status, team.text).toBe(201)
  const fileId = await uploadViaToken(server, owner.token, Buffer.from('%PDF-1.4\n'), {
    mime: 'application/pdf',
    filename: 'a.pdf',
  })
  const record = await server.request('POST', '/api/v1/collections/every/records', {
    ...as,
    body: {
      title: 'Full',
      greeting: 'hello',
      body: '<p>hi</p>',
      contact: 'a@example.com',
      site: 'https://example.com',
      phone: '+44 20 7946 0000',
      handle: 'full',
      token: '0b8e4c1e-4f5a-4d8e-9a3b-1c2d3e4f5a6b',
      seats: 3,
      price: 9.5,
      ratio: 0.25,
      done: true,
      due: '2027-01-31',
      at: 1_800_000_000,
      status: "it's done",
      tags: ['red'],
      meta: { any: ['thing', 1, null] },
      shaped: { kind: 'city', sizes: [1, 2], scores: { a: 1 } },
      team: team.body.id,
      crews: [team.body.id],
      assignee: owner.id,
      watchers: [owner.id],
      doc: fileId,
      where: { type: 'Point', coordinates: [13.4, 52.5] },
    },
  })
  expect(record.status, record.text).toBe(201)
  await server.request('POST', '/api/v1/collections/every/records', {
    ...as,
    body: { title: 'Bare', seats: 0, status: 'open' },
  })
  plain = (await server.request('GET', '/api/v1/collections/every/records?sortBy=title', as)).body.data
  const reply = await server.request(
    'GET',
    '/api/v1/collections/every/records?sortBy=title&expand=team,crews,assignee,watchers',
    as,
  )
  expect(reply.status, reply.text).toBe(200)
  expanded = reply.body.data
})
afterAll(() => server?.stop())

describe('plinth types', { timeout: 120_000 }, () => {
  it('the project uses every field type there is', () => {
    expect(new Set(everyField.map((field) => field.type))).toEqual(new Set(fieldTypes.map((t) => t.type)))
  })

  it('writes types that compile under --strict, which the API answers (plain and expanded) satisfy', async () => {
    const out = join(dir, 'written.ts')
    const ran = await cli(['types', '--out', out])
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toBe('')
    expect(ran.stderr).toBe(`Wrote ${out}: 3 collections\n`)
    const types = readFileSync(out, 'utf8')
    expect(types).toContain('export interface Collections {\n  every: Every\n  record: RecordRecord\n  teams: Teams\n}')

    const usage = `import type { Collections, Every, EveryExpand, Expanded, PlinthGeometry, PlinthJsonValue, PlinthUserProfile, Teams } from './plinth-types.js'
import { createClient } from '@plinth/client'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
function assert<T extends true>(): void {}

// The instance's real answers, as the API gave them.
export const plain: Every[] = ${JSON.stringify(plain)}
export const expanded: Expanded<'every', 'team' | 'crews' | 'assignee' | 'watchers'>[] = ${JSON.stringify(expanded)}

assert<Equal<Collections['every'], Every>>()
assert<Equal<Every['title'], string>>()
assert<Equal<Every['greeting'], string | null>>()
assert<Equal<Every['seats'], number>>()
assert<Equal<Every['price'], number | null>>()
assert<Equal<Every['done'], boolean | null>>()
assert<Equal<Every['due'], string | null>>()
assert<Equal<Every['at'], number | null>>()
assert<Equal<Every['status'], 'open' | 'closed' | "it's done">>()
assert<Equal<Every['tags'], Array<'red' | 'green'> | null>>()
assert<Equal<Every['meta'], PlinthJsonValue | null>>()
assert<Equal<NonNullable<Every['shaped']>['kind'], 'city' | 'village' | null | undefined>>()
assert<Equal<Every['team'], string | null>>()
assert<Equal<Every['crews'], string[] | null>>()
assert<Equal<Every['doc'], string | null>>()
assert<Equal<Every['where'], PlinthGeometry | null>>()
assert<Equal<Every['team_name'], string | null>>()
assert<Equal<Every['team_tier'], 'gold' | 'tin' | null>>()
assert<Equal<Every['crew_count'], number | null>>()
assert<Equal<Every['_version'], number>>()
assert<Equal<Every['deleted_at'], number | null>>()
assert<Equal<EveryExpand['team'], Teams | null>>()
assert<Equal<EveryExpand['crews'], Teams[]>>()
assert<Equal<EveryExpand['assignee'], PlinthUserProfile | string | null>>()

// The output plugs into the SDK's generic: a collection's client, its typed filter and its records.
const client = createClient<Collections>({ url: 'http://127.0.0.1:8090' })
export async function typedList(): Promise<Every['status'] | undefined> {
  const page = await client.collection('every').list({ filter: { status: 'open', seats: { _gte: 2 } } })
  assert<Equal<(typeof page.data)[number]['title'], string>>()
  // @ts-expect-error a field the collection does not have, in a typed filter
  await client.collection('every').list({ filter: { nope: 1 } })
  // @ts-expect-error a value that is not one of the enum's
  await client.collection('every').list({ filter: { status: 'archived' } })
  return page.data[0]?.status
}

// Wrong uses must not compile: were the types loose (any, string), these directives would be unused, an error.
// @ts-expect-error no such field
export const missing: Every['nope'] = 1
// @ts-expect-error not one of the enum's values
export const wrongStatus: Every['status'] = 'archived'
// @ts-expect-error a required field is never null
export const nullTitle: Every['title'] = null
// @ts-expect-error an integer field holds numbers
export const textSeats: Every['seats'] = '3'
// @ts-expect-error a belongsTo relation not expanded is an id, not a record
export const teamRecord: Every['team'] = { id: 'x', name: 'Core' }
// @ts-expect-error a strict structure's enum
export const village: NonNullable<Every['shaped']>['kind'] = 'town'
`
    const compiled = compile(types, { 'usage.ts': usage })
    expect(compiled.stdout + compiled.stderr).toBe('')
    expect(compiled.status).toBe(0)

    // The check can fail: the same types with a wrong use and no directive are refused, naming the place.
    const refused = compile(types, {
      'wrong.ts': `import type { Every } from './plinth-types.js'\nexport const x: Every['status'] = 'archived'\n`,
    })
    expect(refused.status).not.toBe(0)
    expect(refused.stdout).toContain('wrong.ts(2,14): error TS2322: Type \'"archived"\' is not assignable')
  }, 300_000)

  it('--collections limits the output; a relation to a collection left out reads as any record', async () => {
    const ran = await cli(['types', '--collections', 'every'])
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain('export interface Collections {\n  every: Every\n}')
    expect(ran.stdout).not.toContain('export interface Teams')
    expect(ran.stdout).toContain('  team: PlinthAnyRecord | null')
    // The lookup still reads the target's enum from the schema.
    expect(ran.stdout).toContain('  team_tier: "gold" | "tin" | null')
    const compiled = compile(ran.stdout, {})
    expect(compiled.stdout + compiled.stderr).toBe('')
  }, 120_000)

  it('an unknown collection, a bad flag, a refused credential: exit 1, 2 and 1 with plain words', async () => {
    const unknown = await cli(['types', '--collections', 'every,nope'])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toBe('error: no such collection (or not readable with this credential): "nope"\n')
    expect(unknown.stdout).toBe('')
    const usage = await cli(['types', '--colections', 'every'])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain("Unknown option '--colections'")
    const anonymous = await cli(['types'], { PLINTH_TOKEN: '' })
    expect(anonymous.code).toBe(1)
    expect(anonymous.stderr).toMatch(/^error: unauthorized \(401\): /)
    expect(anonymous.stderr).toContain('Set PLINTH_TOKEN')
  })

  it('--help prints the usage and exits 0', async () => {
    const ran = await cli(['types', '--help'])
    expect(ran.code).toBe(0)
    expect(ran.stdout).toContain('Usage: plinth types [--collections a,b] [--out file]')
  })
})
