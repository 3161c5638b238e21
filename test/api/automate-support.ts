import { expect } from 'vitest'
import type { Reply } from '../support/harness.js'

/** The automate API's base path. */
export const AUTOMATE = '/api/v1/automate'

/** One request as some caller (a test's own `call`, which may also keep the replies it sees). */
export type Call = (method: string, path: string, body?: unknown) => Promise<Reply>

/** Creates a manual flow of `operations` as `call`'s caller, publishes it and makes it active; answers its id. */
export async function activeFlow(call: Call, name: string, operations: unknown[]): Promise<string> {
  const created = await call('POST', `${AUTOMATE}/flows`, {
    name,
    triggerType: 'manual',
    triggerConfig: {},
    operations,
  })
  expect(created.status, created.text).toBe(201)
  const id = created.body.data.id as string
  expect((await call('POST', `${AUTOMATE}/flows/${id}/publish`, { changeSummary: 'test' })).status).toBe(200)
  expect((await call('PATCH', `${AUTOMATE}/flows/${id}/status`, { status: 'active' })).status).toBe(200)
  return id
}

/**
 * Executes the flow as `start`'s caller with `body` as $trigger.body, then reads the run as `read`'s caller
 * (who may see it: an administrator when the starter may not) until it has ended; answers the run with its
 * step logs. Gives up after 30 s.
 */
export async function executeToEnd(start: Call, read: Call, flowId: string, body: unknown = {}): Promise<any> {
  const started = await start('POST', `${AUTOMATE}/flows/${flowId}/execute`, body)
  expect(started.status, started.text).toBe(202)
  const deadline = Date.now() + 30_000
  for (;;) {
    const reply = await read('GET', `${AUTOMATE}/runs/${started.body.data.runId}`)
    if (reply.body.data && !['pending', 'running'].includes(reply.body.data.status)) return reply.body.data
    if (Date.now() > deadline) throw new Error(`run did not end: ${reply.text}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
