import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { activeFlow, executeToEnd, type Call } from './automate-support.js'
import {
  bucketKeys,
  connection,
  container,
  startStorageWorld,
  storeRequest,
  type StorageWorld,
} from './containers-storage-support.js'
import { FILES, image, sha256 } from './files-support.js'

/**
 * Flows' file writes into containers (decision 067): file_upload and file_transform take `containerId`,
 * and go through the same files service method as the upload route, as the run's user: the container's
 * types and size refuse a write before anything is stored, a new file lands under its prefix in its
 * storage (here a storage connection's bucket), and a replaced file must already be in it.
 */
let world: StorageWorld
let owner: Account
let editor: Account

const as =
  (token: string): Call =>
  (method, path, body) =>
    world.server.request(method, path, { token, body })
const runAs = (account: Account, flowId: string, body: Record<string, unknown>) =>
  executeToEnd(as(account.token), as(owner.token), flowId, body)
const step = (run: any, key: string) => run.stepLogs.find((s: any) => s.key === key)

beforeAll(async () => {
  world = await startStorageWorld()
  owner = await signUpOwner(world.server)
  editor = await createAccount(world.server, owner.token, { role: 'editor' })
})
afterAll(async () => {
  await world?.stop()
})

describe('file_upload and file_transform with containerId', () => {
  it("write into the container's bucket under its prefix, as the run's user; its rules refuse before anything is stored", async () => {
    const box = await container(world, owner.token, {
      storageConnectionId: await connection(world, owner.token),
      prefix: 'flows/out',
      allowedTypes: ['image/*', 'application/json'],
      maxFileBytes: 200_000,
      visibility: 'private',
    })
    const flowId = await activeFlow(as(owner.token), 'Into a container', [
      {
        key: 'doc',
        type: 'file_upload',
        config: {
          key: 'reports/{{$trigger.body.day}}.json',
          content: '{"day":"{{$trigger.body.day}}"}',
          contentType: '{{$trigger.body.type}}',
          containerId: box.id,
        },
      },
      {
        key: 'pic',
        type: 'file_upload',
        config: {
          key: 'pics/{{$trigger.body.day}}.png',
          content: '{{$trigger.body.png}}',
          encoding: 'base64',
          contentType: 'image/png',
          containerId: box.id,
        },
      },
      {
        key: 'small',
        type: 'file_transform',
        config: {
          sourceKey: '{{$steps.pic.id}}',
          destKey: 'pics/{{$trigger.body.day}}-small.webp',
          operations: [
            { type: 'resize', width: 50 },
            { type: 'format', format: 'webp' },
          ],
          containerId: box.id,
        },
      },
    ])
    const png = await image('png', 200, 100)
    const run = await runAs(editor, flowId, { day: 'd1', type: 'application/json', png: png.toString('base64') })
    expect(run.status, JSON.stringify(run.error)).toBe('completed')
    const doc = step(run, 'doc').output
    const project = (await world.server.request('GET', `${FILES}/${doc.id}`, { token: editor.token })).body.data
      .projectId
    expect(doc).toMatchObject({ visibility: 'private', replaced: false })
    expect(doc.key).toBe(`projects/${project}/files/flows/out/${doc.id}/d1.json`)
    const small = step(run, 'small').output
    expect(small).toMatchObject({ format: 'webp', width: 50, replaced: false })
    expect(await bucketKeys(world, 'box', `projects/${project}/files/flows/out/`)).toEqual(
      [doc.key, step(run, 'pic').output.key, small.key].sort(),
    )
    expect(await world.server.app.storage.list(`projects/${project}/files/`, 100)).toEqual([])
    const token = await world.server.request('GET', `${FILES}/download-token/${small.id}`, { token: editor.token })
    expect(sha256((await storeRequest(token.body.downloadUrl)).bytes)).toBe(small.sha256)

    // A type the container refuses: the step fails with the route's code, and nothing new is stored.
    const before = await bucketKeys(world, 'box')
    const refused = await runAs(editor, flowId, { day: 'd2', type: 'text/plain', png: png.toString('base64') })
    expect(refused.status).toBe('failed')
    expect(step(refused, 'doc').error).toMatchObject({ code: 'invalid_request', details: { field: 'contentType' } })
    expect(await bucketKeys(world, 'box')).toEqual(before)

    // Writing again at a key holds the same file in the same place; naming another container is refused.
    const again = await runAs(editor, flowId, { day: 'd1', type: 'application/json', png: png.toString('base64') })
    expect(again.status, JSON.stringify(again.error)).toBe('completed')
    expect(step(again, 'doc').output).toMatchObject({ id: doc.id, replaced: true })
    const elsewhere = await container(world, owner.token, {})
    const other = await activeFlow(as(owner.token), 'Elsewhere', [
      { key: 'doc', type: 'file_upload', config: { key: 'reports/d1.json', content: '{}', containerId: elsewhere.id } },
    ])
    const moved = await runAs(editor, other, {})
    expect(moved.status).toBe('failed')
    expect(step(moved, 'doc').error).toMatchObject({ code: 'invalid_request', details: { field: 'containerId' } })
  })

  it('an unknown containerId fails the step with invalid_request naming containerId', async () => {
    const flowId = await activeFlow(as(owner.token), 'Unknown container', [
      { key: 'doc', type: 'file_upload', config: { key: 'x/y.txt', content: 'y', containerId: 'nope' } },
    ])
    const run = await runAs(editor, flowId, {})
    expect(run.status).toBe('failed')
    expect(step(run, 'doc').error).toMatchObject({ code: 'invalid_request', details: { field: 'containerId' } })
  })
})
