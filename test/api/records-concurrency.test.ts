import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Reply } from '../support/harness.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { client, createCollection, createRecord, readRecord, recordsPath } from './records-fixtures.js'

let server: TestServer
let owner: Account
const { patch } = client(() => server)
const counters = 'counters'
const writers = 20

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  await createCollection(server, owner.token, counters, [
    { name: 'label', type: 'text', required: false },
    { name: 'count', type: 'integer', required: false },
    { name: 'tags', type: 'json', required: false },
  ])
})
afterAll(async () => {
  await server?.stop()
})

const path = (id: string, query?: Record<string, string | number>) => recordsPath(counters, id, query)
const statuses = (replies: Reply[]) => replies.map((r) => r.status).sort((a, b) => a - b)
/** A record that has been written a few times, so its version is not the initial one. */
async function seeded(): Promise<Record<string, any>> {
  const record = await createRecord(server, owner.token, counters, { label: 'start', count: -1 })
  expect((await patch(path(record.id), owner.token, { label: 'warm' })).status).toBe(200)
  return readRecord(server, owner.token, counters, record.id)
}
const indexes = Array.from({ length: writers }, (_, i) => i)

describe('optimistic concurrency under load: exactly one writer of a version commits', () => {
  it(`${writers} PATCHes with the same If-Match: one 200, the others 412, the winner's value stored`, async () => {
    const record = await seeded()
    const replies = await Promise.all(
      indexes.map((i) =>
        patch(
          path(record.id),
          owner.token,
          { count: i, label: `writer ${i}` },
          { 'If-Match': String(record._version) },
        ),
      ),
    )
    expect(statuses(replies)).toEqual([200, ...Array<number>(writers - 1).fill(412)])
    for (const reply of replies.filter((r) => r.status === 412)) expect(reply.body.error).toBe('precondition_failed')
    const winner = replies.find((r) => r.status === 200)!.body
    expect(winner._version).toBe(record._version + 1)
    const stored = await readRecord(server, owner.token, counters, record.id)
    expect(stored).toEqual(winner)
    expect(stored.label).toBe(`writer ${stored.count}`)
  })

  it(`${writers} PATCHes with the same _version in the body: one 200, the others 409`, async () => {
    const record = await seeded()
    const replies = await Promise.all(
      indexes.map((i) =>
        patch(path(record.id), owner.token, { count: i, label: `writer ${i}`, _version: record._version }),
      ),
    )
    expect(statuses(replies)).toEqual([200, ...Array<number>(writers - 1).fill(409)])
    for (const reply of replies.filter((r) => r.status === 409)) expect(reply.body.error).toBe('conflict')
    const winner = replies.find((r) => r.status === 200)!.body
    const stored = await readRecord(server, owner.token, counters, record.id)
    expect(stored).toEqual(winner)
    expect(stored).toMatchObject({ _version: record._version + 1, label: `writer ${winner.count}` })
  })

  it(`${writers} PATCHes with the same ?version=: one 200, the others 409`, async () => {
    const record = await seeded()
    const replies = await Promise.all(
      indexes.map((i) => patch(path(record.id, { version: record._version }), owner.token, { count: i })),
    )
    expect(statuses(replies)).toEqual([200, ...Array<number>(writers - 1).fill(409)])
    const winner = replies.find((r) => r.status === 200)!.body
    expect(await readRecord(server, owner.token, counters, record.id)).toEqual(winner)
  })
})

describe('concurrent updates without a version all apply', () => {
  it(`${writers} field updates all succeed, each at its own version`, async () => {
    const record = await seeded()
    const replies = await Promise.all(indexes.map((i) => patch(path(record.id), owner.token, { count: i })))
    expect(statuses(replies), replies.find((r) => r.status !== 200)?.text).toEqual(Array<number>(writers).fill(200))
    const versions = replies.map((r) => r.body._version as number).sort((a, b) => a - b)
    expect(versions).toEqual(indexes.map((i) => record._version + 1 + i))
    const stored = await readRecord(server, owner.token, counters, record.id)
    expect(stored._version).toBe(record._version + writers)
    // The stored value is the one of the last write to commit.
    const last = replies.find((r) => r.body._version === stored._version)!.body
    expect(stored.count).toBe(last.count)
  })

  it(`${writers} concurrent $push of distinct values leave all of them in the array (no lost update)`, async () => {
    const record = await seeded()
    const replies = await Promise.all(
      indexes.map((i) => patch(path(record.id), owner.token, { $push: { tags: `t${i}` } })),
    )
    expect(statuses(replies), replies.find((r) => r.status !== 200)?.text).toEqual(Array<number>(writers).fill(200))
    const stored = await readRecord(server, owner.token, counters, record.id)
    expect([...stored.tags].sort()).toEqual(indexes.map((i) => `t${i}`).sort())
    expect(stored._version).toBe(record._version + writers)
    // Each answer shows the array as its own write left it: one more element each time.
    const lengths = replies.map((r) => r.body.tags.length as number).sort((a, b) => a - b)
    expect(lengths).toEqual(indexes.map((i) => i + 1))
  })

  it(`${writers} concurrent $set of distinct keys of one object keep every key`, async () => {
    const record = await seeded()
    const replies = await Promise.all(
      indexes.map((i) => patch(path(record.id), owner.token, { $set: { [`tags.k${i}`]: i } })),
    )
    expect(statuses(replies), replies.find((r) => r.status !== 200)?.text).toEqual(Array<number>(writers).fill(200))
    const stored = await readRecord(server, owner.token, counters, record.id)
    expect(stored.tags).toEqual(Object.fromEntries(indexes.map((i) => [`k${i}`, i])))
  })
})
