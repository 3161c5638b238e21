import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, setGrants, signUpOwner, type Account } from '../support/identity.js'

// GET /api/v1/automate/triggers: every trigger type with the JSON Schema of its config, what a flow editor
// builds its trigger form from (the admin UI's).

let server: TestServer
let owner: Account
beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
})

describe('GET /api/v1/automate/triggers', () => {
  it('lists every trigger type with its label and config schema', async () => {
    const reply = await server.request('GET', '/api/v1/automate/triggers', { token: owner.token })
    expect(reply.status, reply.text).toBe(200)
    const types = reply.body.data as { type: string; label: string; schema: Record<string, any> }[]
    expect(types.map((t) => t.type).sort()).toEqual(
      [
        'another_flow',
        'api_endpoint',
        'app_event',
        'event_action',
        'event_filter',
        'manual',
        'schedule',
        'webhook',
      ].sort(),
    )
    const manual = types.find((t) => t.type === 'manual')!
    expect(manual.label).toEqual(expect.any(String))
    expect(manual.schema.type).toBe('object')
    expect(Object.keys(manual.schema.properties)).toEqual(expect.arrayContaining(['input_fields', 'confirm']))
    const schedule = types.find((t) => t.type === 'schedule')!
    expect(Object.keys(schedule.schema.properties)).toEqual(expect.arrayContaining(['cron', 'timezone']))
  })

  it('needs system/automate:read', async () => {
    const nobody = await createAccount(server, owner.token, { role: 'viewer' })
    await setGrants(server, owner.token, 'viewer', [])
    expect((await server.request('GET', '/api/v1/automate/triggers', { token: nobody.token })).status).toBe(403)
    expect((await server.request('GET', '/api/v1/automate/triggers')).status).toBe(401)
  })
})
