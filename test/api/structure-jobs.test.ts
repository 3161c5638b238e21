import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RecordEvent } from '../../src/modules/records/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, setGrants, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'
import {
  client,
  createCollection,
  createRecord,
  expectError,
  freshName,
  readRecord,
  recordsPath,
} from './records-fixtures.js'
import { createGate, placeShape, scanJob, settle, startPacedServer, structurePath } from './structure-support.js'

let server: TestServer
let owner: Account
let editor: Account
const { get, post, patch, del } = client(() => server)

const metaField = (enforcement: string, shape: unknown = placeShape) => ({
  name: 'meta',
  type: 'json',
  required: false,
  structure: { enforcement, shape },
})
const jobPath = (collection: string, kind: 'scan' | 'repair', id: string) =>
  `/api/v1/collections/${collection}/${kind}-jobs/${id}`

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  editor = await createAccount(server, owner.token, { role: 'editor' })
})
afterAll(async () => {
  await server?.stop()
})

/** A collection of places: two clean records and the problems a scan reports. */
type PlaceIds = Record<'clean' | 'clean2' | 'typo' | 'typo2' | 'key' | 'clash' | 'type', string>
async function seedPlaces(): Promise<{ name: string; ids: PlaceIds }> {
  const name = await createCollection(server, owner.token, freshName('places'), [
    { name: 'title', type: 'text', required: false },
    metaField('warn'),
  ])
  const ids: Record<string, string> = {}
  const add = async (key: string, meta: unknown) => {
    ids[key] = (await createRecord(server, owner.token, name, { title: key, meta })).id
  }
  await add('clean', { biome: ['Forest'], kind: 'city' })
  await add('clean2', null)
  await add('typo', { biome: ['Fores', 'Desert', 'Fores'], kind: 'City' })
  await add('typo2', { biome: ['Fores'] })
  await add('key', { Biome: ['Desert'], size: 1 })
  await add('clash', { Biome: ['Desert'], biome: ['Forest'] })
  await add('type', { size: 'big' })
  return { name, ids: ids as PlaceIds }
}

describe('scan jobs', () => {
  it('POST answers 202 running; the job walks the whole collection and completes with the report', async () => {
    const { name, ids } = await seedPlaces()
    const before = Date.now()
    const started = await post(structurePath(name, 'meta', 'scan-jobs'), owner.token)
    expect(started.status, started.text).toBe(202)
    expect(started.body.data).toMatchObject({
      jobId: expect.stringMatching(/^[0-9a-f]{32}$/),
      kind: 'scan',
      collection: name,
      field: 'meta',
      status: 'running',
      checked: 0,
      invalid: 0,
      groups: [],
      cursor: null,
      estimate: { total: 7, upperBound: 5, narrowed: true },
    })
    expect(started.body.data).not.toHaveProperty('repair')
    // Milliseconds, not seconds.
    expect(started.body.data.startedAt).toBeGreaterThanOrEqual(before)
    const done = await settle(server, owner.token, name, 'scan', started.body.data.jobId)
    expect(done).toMatchObject({ status: 'complete', checked: 5, invalid: 5, cursor: null })
    expect(done.updatedAt).toBeGreaterThanOrEqual(done.startedAt)
    const fores = done.groups.find((g: any) => g.code === 'enum' && g.path === 'biome[]')
    expect(fores).toMatchObject({ from: 'Fores', suggestion: 'Forest', count: 2 })
    expect(new Set(fores.sampleIds)).toEqual(new Set([ids.typo, ids.typo2]))
    expect(done.groups.find((g: any) => g.code === 'unknown-key')).toMatchObject({
      path: '$',
      from: 'Biome',
      suggestion: 'biome',
      count: 2,
    })
    // GET answers the same job again.
    const again = await get(jobPath(name, 'scan', done.jobId), owner.token)
    expect(again.body.data).toEqual(done)
  })

  it('a job id of another collection, or of the other kind, is 404 NOT_FOUND', async () => {
    const { name } = await seedPlaces()
    const other = await createCollection(server, owner.token, freshName('other'), [metaField('warn')])
    const done = await scanJob(server, owner.token, name, 'meta')
    expectError(await get(jobPath(other, 'scan', done.jobId), owner.token), 404, 'NOT_FOUND')
    expectError(await get(jobPath(name, 'repair', done.jobId), owner.token), 404, 'NOT_FOUND')
    expectError(await get(jobPath(name, 'scan', 'f'.repeat(32)), owner.token), 404, 'NOT_FOUND')
    // Deleting a finished job does not change it.
    const deleted = await del(jobPath(name, 'scan', done.jobId), owner.token)
    expect(deleted.status).toBe(200)
    expect(deleted.body.data).toMatchObject({ status: 'complete', checked: done.checked })
  })

  it('an enum column can be scanned by job too (its implicit structure at $)', async () => {
    const name = await createCollection(server, owner.token, freshName('enums'), [
      { name: 'status', type: 'enum', required: false, enumValues: ['open'] },
    ])
    await createRecord(server, owner.token, name, { status: 'open' })
    expect(await scanJob(server, owner.token, name, 'status')).toMatchObject({
      status: 'complete',
      checked: 0,
      invalid: 0,
      estimate: { total: 1, upperBound: 0 },
    })
  })
})

describe('switching enforcement to strict', () => {
  const strictPatch = (name: string, shape: unknown = placeShape) =>
    patch(`/api/v1/collections/${name}`, owner.token, {
      fields: [{ name: 'title', type: 'text', required: false }, metaField('strict', shape)],
    })

  it('needs a complete scan job of the current shape that found nothing (else 409 conflict, nothing changed)', async () => {
    const { name, ids } = await seedPlaces()
    const noScan = await strictPatch(name)
    expectError(noScan, 409, 'conflict')
    expect(noScan.body.details).toMatchObject({ field: 'meta', scan: null })

    const dirty = await scanJob(server, owner.token, name, 'meta')
    const afterDirty = await strictPatch(name)
    expectError(afterDirty, 409, 'conflict')
    expect(afterDirty.body.details.scan).toMatchObject({ jobId: dirty.jobId, status: 'complete', invalid: 5 })

    // A cursor scan is not a job: it does not count.
    for (const id of [ids.typo, ids.typo2, ids.key, ids.clash, ids.type])
      expect((await del(recordsPath(name, id), owner.token)).status).toBe(200)
    const cursorScan = await get(structurePath(name, 'meta', 'scan'), owner.token)
    expect(cursorScan.body.data).toMatchObject({ invalid: 0 })
    expectError(await strictPatch(name), 409, 'conflict')

    const clean = await scanJob(server, owner.token, name, 'meta')
    expect(clean).toMatchObject({ status: 'complete', invalid: 0 })
    // Changing the shape in the same request is refused: the scan was of the old shape.
    const widerInSameRequest = { ...placeShape, entries: { ...placeShape.entries, extra: { type: 'string' } } }
    expectError(await strictPatch(name, widerInSameRequest), 409, 'conflict')

    const switched = await strictPatch(name)
    expect(switched.status, switched.text).toBe(200)
    expect(switched.body.data.fields[1].structure.enforcement).toBe('strict')
    expectError(await post(recordsPath(name), owner.token, { meta: { biome: ['Fores'] } }), 422, 'validation_error')
  })

  it('a scan from before the shape changed does not count, even if the shape changes back', async () => {
    const name = await createCollection(server, owner.token, freshName('flip'), [
      { name: 'title', type: 'text', required: false },
      metaField('warn'),
    ])
    await createRecord(server, owner.token, name, { meta: { kind: 'city' } })
    expect(await scanJob(server, owner.token, name, 'meta')).toMatchObject({ invalid: 0 })
    const narrower = { type: 'object', entries: { kind: { type: 'enum', values: ['village'] } } }
    const back = await patch(`/api/v1/collections/${name}`, owner.token, {
      fields: [{ name: 'title', type: 'text', required: false }, metaField('warn', narrower)],
    })
    expect(back.status).toBe(200)
    expect(
      (
        await patch(`/api/v1/collections/${name}`, owner.token, {
          fields: [{ name: 'title', type: 'text', required: false }, metaField('warn')],
        })
      ).status,
    ).toBe(200)
    const refused = await strictPatch(name)
    expectError(refused, 409, 'conflict')
    expect(refused.body.details.scan).toMatchObject({ current: false })
    await scanJob(server, owner.token, name, 'meta')
    expect((await strictPatch(name)).status).toBe(200)
  })

  it('a strict field may widen its shape without a scan, never narrow it; a new field may start strict', async () => {
    const name = await createCollection(server, owner.token, freshName('strictly'), [
      { name: 'title', type: 'text', required: false },
      metaField('strict'),
    ])
    const wider = {
      ...placeShape,
      entries: { ...placeShape.entries, kind: { type: 'enum', values: ['city', 'village', 'town'] } },
    }
    expect((await strictPatch(name, wider)).status).toBe(200)
    const narrower = { ...placeShape, entries: { ...placeShape.entries, kind: { type: 'enum', values: ['city'] } } }
    expectError(await strictPatch(name, narrower), 409, 'conflict')
    const added = await patch(`/api/v1/collections/${name}`, owner.token, {
      fields: [
        { name: 'title', type: 'text', required: false },
        metaField('strict', wider),
        {
          name: 'extra',
          type: 'json',
          required: false,
          structure: { enforcement: 'strict', shape: { type: 'string' } },
        },
      ],
    })
    expect(added.status, added.text).toBe(200)
  })
})

describe('repair jobs', () => {
  it('applies fixes as ordinary updates by the caller: repaired, skipped, failed, events fired, nothing deleted', async () => {
    const { name, ids } = await seedPlaces()
    const scan = await scanJob(server, owner.token, name, 'meta')
    const fixes = scan.groups
      .filter((g: any) => g.from !== undefined)
      .map((g: any) => ({ kind: g.code, path: g.path, from: g.from, to: g.suggestion }))
    expect(fixes).toEqual(
      expect.arrayContaining([
        { kind: 'enum', path: 'biome[]', from: 'Fores', to: 'Forest' },
        { kind: 'enum', path: 'kind', from: 'City', to: 'city' },
        { kind: 'unknown-key', path: '$', from: 'Biome', to: 'biome' },
      ]),
    )
    const events: RecordEvent[] = []
    const off = server.app.events.on('record.update', (event) => void (event.collection === name && events.push(event)))
    const clashBefore = await readRecord(server, owner.token, name, ids.clash)
    const started = await post(structurePath(name, 'meta', 'repair-jobs'), owner.token, { fixes })
    expect(started.status, started.text).toBe(202)
    expect(started.body.data).toMatchObject({
      kind: 'repair',
      status: 'running',
      repair: { fixes: fixes.length, repaired: 0, skipped: 0, failed: 0, failures: [] },
    })
    const done = await settle(server, owner.token, name, 'repair', started.body.data.jobId)
    off()
    expect(done.status).toBe('complete')
    // typo, typo2, key repaired; clash refused (biome exists already); type skipped (no fix applies).
    expect(done.repair).toEqual({
      fixes: fixes.length,
      repaired: 3,
      skipped: 1,
      failed: 1,
      failures: [{ id: ids.clash, reason: expect.stringContaining('key "biome" already exists') }],
    })
    expect(done.checked).toBe(5)
    // What is left: the clash and the type problem.
    expect(done.invalid).toBe(2)
    expect(await readRecord(server, owner.token, name, ids.typo)).toMatchObject({
      meta: { biome: ['Forest', 'Desert', 'Forest'], kind: 'city' },
      _version: 2,
      updated_by: owner.id,
    })
    expect(await readRecord(server, owner.token, name, ids.key)).toMatchObject({ meta: { biome: ['Desert'], size: 1 } })
    expect(await readRecord(server, owner.token, name, ids.clash)).toEqual(clashBefore)
    expect((await readRecord(server, owner.token, name, ids.clean))._version).toBe(1)
    await new Promise((resolve) => setImmediate(resolve))
    expect(events.map((e) => e.after?.id).sort()).toEqual([ids.typo, ids.typo2, ids.key].sort())
    // A second scan finds only what could not be repaired.
    const rescan = await scanJob(server, owner.token, name, 'meta')
    expect(rescan.invalid).toBe(2)
  })

  it('row rules apply: rows outside the caller’s update scope count as failed and stay as they were', async () => {
    const name = await createCollection(server, owner.token, freshName('scoped'), [
      { name: 'title', type: 'text', required: false },
      metaField('warn'),
    ])
    const mine = await createRecord(server, owner.token, name, { title: 'mine', meta: { kind: 'City' } })
    const theirs = await createRecord(server, owner.token, name, { title: 'theirs', meta: { kind: 'City' } })
    const created = await server.request('POST', '/api/v1/roles', {
      token: owner.token,
      body: { name: freshName('builder'), description: 'b' },
    })
    expect(created.status, created.text).toBe(201)
    const role = created.body.data.name
    await setGrants(server, owner.token, role, [
      { resource: 'system/roles', action: 'read' },
      { resource: `collections/${name}`, action: 'read' },
      { resource: `collections/${name}`, action: 'update', item_filter: { title: { _eq: 'mine' } } },
    ])
    const builder = await createAccount(server, owner.token, { role })
    const started = await post(structurePath(name, 'meta', 'repair-jobs'), builder.token, {
      fixes: [{ kind: 'enum', path: 'kind', from: 'City', to: 'city' }],
    })
    expect(started.status, started.text).toBe(202)
    const done = await settle(server, builder.token, name, 'repair', started.body.data.jobId)
    expect(done.repair).toMatchObject({
      repaired: 1,
      failed: 1,
      skipped: 0,
      failures: [{ id: theirs.id, reason: expect.any(String) }],
    })
    expect(await readRecord(server, owner.token, name, mine.id)).toMatchObject({
      meta: { kind: 'city' },
      updated_by: builder.id,
    })
    expect(await readRecord(server, owner.token, name, theirs.id)).toMatchObject({
      meta: { kind: 'City' },
      _version: 1,
    })
  })

  it('repairs an enum column and a multi_enum column (path $)', async () => {
    const name = await createCollection(server, owner.token, freshName('cols'), [
      { name: 'status', type: 'enum', required: false, enumValues: ['open', 'closed'] },
      { name: 'tags', type: 'multi_enum', required: false, enumValues: ['alpha', 'beta'] },
    ])
    const a = await createRecord(server, owner.token, name, { status: 'open', tags: ['alpha'] })
    const handle = await server.app.registry.get(server.app.defaultProject.id)
    await handle.db
      .updateTable(name)
      .set({ status: 'Open', tags: JSON.stringify(['Beta', 'alpha']) })
      .where('id', '=', a.id)
      .execute()
    for (const [field, fix] of [
      ['status', { kind: 'enum', path: '$', from: 'Open', to: 'open' }],
      ['tags', { kind: 'enum', path: '$', from: 'Beta', to: 'beta' }],
    ] as const) {
      const started = await post(structurePath(name, field, 'repair-jobs'), owner.token, { fixes: [fix] })
      expect(started.status, started.text).toBe(202)
      expect((await settle(server, owner.token, name, 'repair', started.body.data.jobId)).repair).toMatchObject({
        repaired: 1,
        failed: 0,
      })
    }
    expect(await readRecord(server, owner.token, name, a.id)).toMatchObject({ status: 'open', tags: ['beta', 'alpha'] })
  })

  describe('refuses a request that cannot be a repair (422 VALIDATION_ERROR), starting nothing', () => {
    let name: string
    beforeAll(async () => {
      name = (await seedPlaces()).name
    })
    const fix = { kind: 'enum', path: 'biome[]', from: 'Fores', to: 'Forest' }
    const cases: [string, unknown][] = [
      ['no fixes', []],
      ['no fixes key', undefined],
      ['51 fixes', Array.from({ length: 51 }, (_, i) => ({ ...fix, from: `x${i}` }))],
      ['a type fix', [{ kind: 'type', path: 'size', from: 'big', to: '1' }]],
      ['an unknown kind', [{ ...fix, kind: 'rename' }]],
      ['a to that is not allowed', [{ ...fix, to: 'Jungle' }]],
      ['a from that is allowed', [{ ...fix, from: 'Desert' }]],
      ['a path that is not in the structure', [{ ...fix, path: 'biomes[]' }]],
      ['an enum fix on an object path', [{ ...fix, path: '$' }]],
      ['an unknown-key fix to an undeclared key', [{ kind: 'unknown-key', path: '$', from: 'Biome', to: 'biomes' }]],
      ['a key fix on a path that is not map keys', [{ kind: 'key', path: 'kind', from: 'a', to: 'city' }]],
      ['two fixes of one value', [fix, { ...fix, to: 'Desert' }]],
      ['a fix that is not an object', ['biome']],
    ]
    for (const [label, fixes] of cases) {
      it(label, async () => {
        const reply = await post(
          structurePath(name, 'meta', 'repair-jobs'),
          owner.token,
          fixes === undefined ? {} : { fixes },
        )
        expectError(reply, 422, 'VALIDATION_ERROR')
      })
    }
  })
})

describe('scan and repair job errors', () => {
  let name: string
  beforeAll(async () => {
    name = await createCollection(server, owner.token, freshName('errs'), [
      { name: 'plain', type: 'json', required: false },
      metaField('warn'),
    ])
  })
  runScenarios(
    () => server,
    [
      {
        name: 'an editor cannot start a scan job',
        as: () => editor.token,
        method: 'POST',
        path: '/api/v1/collections/errs/fields/meta/scan-jobs',
        status: 403,
        contains: { error: 'FORBIDDEN' },
      },
      {
        name: 'an editor cannot start a repair',
        as: () => editor.token,
        method: 'POST',
        path: '/api/v1/collections/errs/fields/meta/repair-jobs',
        body: { fixes: [] },
        status: 403,
        contains: { error: 'FORBIDDEN' },
      },
      {
        name: 'an editor cannot read a job',
        as: () => editor.token,
        method: 'GET',
        path: `/api/v1/collections/errs/scan-jobs/${'a'.repeat(32)}`,
        status: 403,
        contains: { error: 'FORBIDDEN' },
      },
      {
        name: 'an editor cannot cancel a job',
        as: () => editor.token,
        method: 'DELETE',
        path: `/api/v1/collections/errs/repair-jobs/${'a'.repeat(32)}`,
        status: 403,
        contains: { error: 'FORBIDDEN' },
      },
      {
        name: 'anonymous',
        method: 'POST',
        path: '/api/v1/collections/errs/fields/meta/scan-jobs',
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'no such collection',
        as: () => owner.token,
        method: 'POST',
        path: '/api/v1/collections/nope/fields/meta/scan-jobs',
        status: 404,
        contains: { error: 'COLLECTION_NOT_FOUND' },
      },
      {
        name: 'no such collection for a job',
        as: () => owner.token,
        method: 'GET',
        path: `/api/v1/collections/nope/scan-jobs/${'a'.repeat(32)}`,
        status: 404,
        contains: { error: 'COLLECTION_NOT_FOUND' },
      },
    ],
  )
  it('no such field (404 NOT_FOUND), a field without structure (422 VALIDATION_ERROR)', async () => {
    expectError(await post(structurePath(name, 'nope', 'scan-jobs'), owner.token), 404, 'NOT_FOUND')
    expectError(await post(structurePath(name, 'plain', 'scan-jobs'), owner.token), 422, 'VALIDATION_ERROR')
    expectError(
      await post(structurePath(name, 'plain', 'repair-jobs'), owner.token, {
        fixes: [{ kind: 'enum', path: '$', from: 'a', to: 'b' }],
      }),
      422,
      'VALIDATION_ERROR',
    )
  })
})

describe('jobs held between batches', () => {
  const gate = createGate()
  let held: TestServer
  let heldOwner: Account
  beforeAll(async () => {
    held = await startPacedServer(gate.pace)
    heldOwner = await signUpOwner(held)
  })
  afterAll(async () => {
    gate.release()
    await held?.stop()
  })

  async function manyPlaces(count: number): Promise<string> {
    const name = freshName('many')
    const created = await held.request('POST', '/api/v1/collections', {
      token: heldOwner.token,
      body: { name, fields: [metaField('warn')] },
    })
    expect(created.status, created.text).toBe(201)
    for (let i = 0; i < count; i++) {
      const reply = await held.request('POST', recordsPath(name), {
        token: heldOwner.token,
        body: { meta: { kind: i % 2 === 0 ? 'City' : 'city' } },
      })
      expect(reply.status).toBe(201)
    }
    return name
  }
  /** Waits until the job's next batch is waiting at the gate. */
  const waitAtGate = () => gate.arrival()
  const request = (method: string, path: string, body?: unknown) =>
    held.request(method, path, { token: heldOwner.token, ...(body === undefined ? {} : { body }) })

  it('DELETE cancels a running scan job; the report so far is kept, and the job does not go on', async () => {
    const name = await manyPlaces(450)
    gate.close()
    const started = await request('POST', structurePath(name, 'meta', 'scan-jobs'))
    expect(started.status).toBe(202)
    const id = started.body.data.jobId
    await waitAtGate()
    gate.step() // batch 1 (200 of 225 candidates)
    await waitAtGate()
    const midway = (await request('GET', jobPath(name, 'scan', id))).body.data
    expect(midway).toMatchObject({ status: 'running', checked: 200, invalid: 200, cursor: expect.any(String) })
    const cancelled = await request('DELETE', jobPath(name, 'scan', id))
    expect(cancelled.status, cancelled.text).toBe(200)
    expect(cancelled.body.data).toMatchObject({ status: 'cancelled', checked: 200, invalid: 200 })
    expect(cancelled.body.data.groups).toEqual([expect.objectContaining({ code: 'enum', path: 'kind', count: 200 })])
    gate.release()
    const after = await settle(held, heldOwner.token, name, 'scan', id)
    expect(after).toMatchObject({ status: 'cancelled', checked: 200 })
    // The cursor of the cancelled job continues as a cursor scan.
    const rest = await request(
      'GET',
      `${structurePath(name, 'meta', 'scan')}?cursor=${encodeURIComponent(after.cursor)}`,
    )
    expect(rest.body.data).toMatchObject({ checked: 25, invalid: 25, nextCursor: null })
  })

  it('a structure change while a job runs supersedes it; a cancelled repair keeps the writes it made', async () => {
    const name = await manyPlaces(60)
    gate.close()
    const scan = (await request('POST', structurePath(name, 'meta', 'scan-jobs'))).body.data
    await waitAtGate()
    const changed = await request('PATCH', `/api/v1/collections/${name}`, { fields: [metaField('off')] })
    expect(changed.status).toBe(200)
    expect((await request('GET', jobPath(name, 'scan', scan.jobId))).body.data.status).toBe('running')
    const changedShape = {
      ...placeShape,
      entries: { ...placeShape.entries, kind: { type: 'enum', values: ['city', 'village', 'town'] } },
    }
    expect(
      (await request('PATCH', `/api/v1/collections/${name}`, { fields: [metaField('off', changedShape)] })).status,
    ).toBe(200)
    expect((await request('GET', jobPath(name, 'scan', scan.jobId))).body.data.status).toBe('superseded')
    gate.step()
    expect((await settle(held, heldOwner.token, name, 'scan', scan.jobId)).status).toBe('superseded')

    const repair = (
      await request('POST', structurePath(name, 'meta', 'repair-jobs'), {
        fixes: [{ kind: 'enum', path: 'kind', from: 'City', to: 'city' }],
      })
    ).body.data
    await waitAtGate()
    gate.step() // the first 20 candidates are repaired
    await waitAtGate()
    const cancelled = (await request('DELETE', jobPath(name, 'repair', repair.jobId))).body.data
    expect(cancelled).toMatchObject({ status: 'cancelled', repair: { repaired: 20, failed: 0 } })
    gate.release()
    expect((await settle(held, heldOwner.token, name, 'repair', repair.jobId)).repair.repaired).toBe(20)
    const left = (await request('GET', structurePath(name, 'meta', 'scan'))).body.data
    expect(left.invalid).toBe(10)
  })
})
