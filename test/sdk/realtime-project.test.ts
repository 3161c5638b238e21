import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Subscription } from '../../packages/client/src/index.js'
import { createCollection } from '../api/records-fixtures.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { clientFor, collector, summary } from './realtime-support.js'

// A super_admin's client acting in another project (transport.project, X-Project-Id) subscribes there too:
// a socket carries the project as ?project= (it cannot send headers), SSE as the header. The same name in
// the home project is not what it hears; another caller cannot use ?project= to reach a project.

let server: TestServer
let owner: Account
let other: string
const closeLater: Subscription[] = []
const fields = [{ name: 'title', type: 'text', required: true }]

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const project = await server.request('POST', '/api/v1/projects', { token: owner.token, body: { name: 'Other' } })
  expect(project.status, project.text).toBe(201)
  other = project.body.data.id
  await createCollection(server, owner.token, 'notes', fields)
  const there = await server.request('POST', '/api/v1/collections', {
    token: owner.token,
    headers: { 'x-project-id': other },
    body: { name: 'notes', fields },
  })
  expect(there.status, there.text).toBe(201)
})
afterAll(async () => {
  await Promise.all(closeLater.map((s) => s.close()))
  await server?.stop()
})

const write = (title: string, project?: string) =>
  server.request('POST', '/api/v1/collections/notes/records', {
    token: owner.token,
    headers: project ? { 'x-project-id': project } : {},
    body: { title },
  })

describe('realtime in another project', () => {
  for (const transport of ['websocket', 'sse'] as const) {
    it(`${transport}: hears the chosen project's writes, not the home project's`, async () => {
      const client = clientFor(server.url, owner.token)
      client.transport.project = other
      const seen = collector<{ title: string }>()
      const sub = client.subscribe<{ title: string }>('notes', {}, seen.handler, { transport })
      closeLater.push(sub)
      await sub.ready
      expect((await write(`${transport} at home`)).status).toBe(201)
      expect((await write(`${transport} there`, other)).status).toBe(201)
      await seen.until((e) => e.type !== 'gap' && e.record.title === `${transport} there`)
      expect(summary(seen.events)).toEqual([`record.create ${transport} there`])
    })
  }

  it('?project= is refused to anyone but a super_admin', async () => {
    const admin = await createAccount(server, owner.token, { role: 'admin' })
    const reply = await fetch(`${server.url}/api/v1/collections/notes/stream?project=${other}`, {
      headers: { authorization: `Bearer ${admin.token}` },
    })
    expect(reply.status).toBe(403)
    await reply.body?.cancel()
  })
})
