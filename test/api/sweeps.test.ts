import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock } from '../../src/lib/clock-manual.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { FILES, metadata, someBytes, uploadViaToken } from './files-support.js'
import { createCollection, freshName } from './records-fixtures.js'

// The maintenance sweeps run on the app's Clock (decision 020): a test clock that only moves when told
// shows each sweep doing its work when, and only when, its time has come. Nothing here waits on real time.

const minutes = (n: number) => n * 60_000
const clock = createManualClock()
let server: TestServer
let owner: Account

beforeAll(async () => {
  // Sessions live an hour here, as long as an unconfirmed upload is kept.
  server = await startServer({ SESSION_TTL_SECONDS: '3600' }, { clock })
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
})

const db = () => server.app.registry.system.db
const sessionsOf = async (userId: string) =>
  (await db().selectFrom('sessions').select('user_id').where('user_id', '=', userId).execute()).length
const importJobRows = async (id: string) =>
  (await db().selectFrom('record_import_jobs').select('id').where('id', '=', id).execute()).length

async function signIn(): Promise<string> {
  const reply = await server.request('POST', '/api/auth/sign-in/email', {
    body: { email: owner.email, password: owner.password },
  })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.token
}

describe('sweeps run when the app’s clock reaches them', () => {
  it('abandoned uploads and expired sessions go at the first sweep past their hour; import jobs after their day', async () => {
    const abandoned = await uploadViaToken(server, owner.token, someBytes(16), { filename: 'left.bin', confirm: false })
    const kept = await uploadViaToken(server, owner.token, someBytes(16), { filename: 'kept.bin' })
    const uploadKeys = `projects/${server.app.defaultProject.id}/uploads/${abandoned}/`
    const collection = await createCollection(server, owner.token, freshName('sweep'), [
      { name: 'title', type: 'text', required: false },
    ])
    const job = await server.request('POST', `/api/v1/collections/${collection}/records/import-jobs`, {
      token: owner.token,
      body: {},
    })
    expect(job.status, job.text).toBe(201)
    const jobId: string = job.body.jobId

    // Ten minutes on: a sweep of each kind ran, and everything is still young.
    await clock.advance(minutes(10))
    expect(await sessionsOf(owner.id)).toBe(1)
    expect(await metadata(server, owner.token, abandoned)).toMatchObject({ status: 'pending' })
    expect((await server.app.storage.list(uploadKeys, 10)).length).toBe(1)

    // Seventy minutes on: the hour has passed and the sweeps since removed the session and the upload.
    await clock.advance(minutes(60))
    expect(await sessionsOf(owner.id)).toBe(0)
    const token = await signIn()
    expect((await server.request('GET', `${FILES}/${abandoned}`, { token })).status).toBe(404)
    expect((await server.app.storage.list(uploadKeys, 10)).length).toBe(0)
    expect(await metadata(server, token, kept)).toMatchObject({ status: 'complete' })
    expect(await importJobRows(jobId)).toBe(1)

    // A day after the job was last touched, the import job sweep removed it.
    await clock.advance(minutes(24 * 60))
    expect(await importJobRows(jobId)).toBe(0)
  })
})
