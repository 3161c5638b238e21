import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { principals } from '../../../lib/principal.js'
import type { Collection } from '../../collections/index.js'
import type { BeforeWrite } from '../../records/index.js'
import type { RunOutcome } from '../model.js'
import { createTriggers } from './create-triggers.js'
import { createFakeRuns, fakeDeps, makeFlow, type StartCall } from './fakes.js'

const editor = principals.user(
  { homeProjectId: 'p1', userId: 'u1', roleId: 'r-editor', roleName: 'editor', superAdmin: false },
  { id: 's1', expiresAt: 2e9 },
)
const tasks = { id: 'c1', projectId: 'p1', name: 'tasks' } as Collection

function write(action: BeforeWrite['action'], data: Record<string, unknown> = { title: 'draft' }): BeforeWrite {
  return {
    action,
    collection: tasks,
    principal: editor,
    before: action === 'create' ? null : { id: 'rec1', title: 'old' },
    data: action === 'create' || action === 'update' ? data : {},
  }
}

async function setup(
  outcome: (call: StartCall) => Partial<RunOutcome> = () => ({}),
  flowsToAdd = [makeFlow('event_filter', { events: ['record.create', 'record.update'] })],
) {
  const runs = createFakeRuns(outcome)
  const { deps, flows } = fakeDeps({ runs: runs.runs })
  for (const flow of flowsToAdd) await flows.put(flow)
  const triggers = await createTriggers(deps)
  return { deps, flows, runs, triggers }
}

async function refusalOf(
  promise: Promise<unknown>,
): Promise<{ status: number; code: string; message: string; details: Record<string, unknown> }> {
  try {
    await promise
  } catch (err) {
    if (err instanceof AppError)
      return { status: err.status, code: err.code, message: err.message, details: err.details }
    throw err
  }
  throw new Error('the write was not refused')
}

describe('event_filter', () => {
  it('costs one cached lookup and no run when the project has no event_filter flow', async () => {
    const { deps, flows, runs, triggers } = await setup(undefined, [
      makeFlow('event_action', { events: ['record.create'] }),
    ])
    try {
      expect(await deps.hooks.run(write('create'))).toEqual({ title: 'draft' })
      expect(runs.calls).toEqual([])
      expect(flows.lookups.activeByTrigger).toBe(1)
    } finally {
      await triggers.close()
    }
  })

  it('runs the flow in the write with the incoming values as $trigger.body.data, and the writer as initiator', async () => {
    const { deps, runs, triggers } = await setup()
    try {
      expect(await deps.hooks.run(write('update', { title: 'new' }))).toEqual({ title: 'new' })
      expect(runs.calls).toHaveLength(1)
      expect(runs.calls[0]).toMatchObject({ mode: 'runNow', initiator: editor })
      expect(runs.calls[0]!.trigger).toEqual({
        type: 'event_filter',
        event: 'record.update',
        collection: 'tasks',
        method: null,
        body: {
          projectId: 'p1',
          collection: 'tasks',
          action: 'update',
          before: { id: 'rec1', title: 'old' },
          data: { title: 'new' },
          principal: { id: 'u1', kind: 'user', role: 'editor' },
        },
      })
    } finally {
      await triggers.close()
    }
  })

  it('replaces the incoming values with the output of the step keyed data, flow after flow', async () => {
    const first = makeFlow('event_filter', { events: ['record.create'] })
    const second = makeFlow('event_filter', { events: ['record.create'] })
    const outputs: Record<string, unknown> = {
      [first.id]: { data: { title: 'DRAFT', slug: 'draft' }, other: { title: 'ignored' } },
      // Not a plain object: the values stay as the first flow left them.
      [second.id]: { data: 'not an object' },
    }
    const { deps, runs, triggers } = await setup(
      (call) => ({ steps: outputs[call.flow.id] as Record<string, unknown> }),
      [first, second],
    )
    try {
      expect(await deps.hooks.run(write('create'))).toEqual({ title: 'DRAFT', slug: 'draft' })
      // The second flow saw what the first returned.
      expect((runs.calls[1]!.trigger.body as { data: unknown }).data).toEqual({ title: 'DRAFT', slug: 'draft' })
    } finally {
      await triggers.close()
    }
  })

  it.each([
    [
      'a throw_error with statusCode 422',
      { status: 'failed', error: { code: 'throw_error', message: 'Title is taken', step: 'check', statusCode: 422 } },
      422,
      'validation_error',
      'Title is taken',
    ],
    [
      'a throw_error with statusCode 403',
      { status: 'failed', error: { code: 'throw_error', message: 'Not on Sundays', statusCode: 403 } },
      403,
      'forbidden',
      'Not on Sundays',
    ],
    [
      'a stop with status error (no statusCode)',
      { status: 'failed', error: { code: 'stopped', message: 'Refused by policy' } },
      400,
      'invalid_request',
      'Refused by policy',
    ],
    [
      'a throw_error asking for 500',
      { status: 'failed', error: { code: 'throw_error', message: 'Boom', statusCode: 500 } },
      400,
      'invalid_request',
      'Boom',
    ],
    [
      'a throw_error asking for 418',
      { status: 'failed', error: { code: 'throw_error', message: 'Teapot', statusCode: 418 } },
      400,
      'invalid_request',
      'Teapot',
    ],
    [
      'a timed-out run',
      { status: 'timed_out', error: { code: 'timed_out', message: 'The flow took longer than 30000 ms' } },
      408,
      'request_timeout',
      'The flow took longer than 30000 ms',
    ],
  ] as const)(
    'refuses the write on %s with the flow message and a 4xx',
    async (_name, outcome, status, code, message) => {
      const { deps, triggers } = await setup(() => outcome as Partial<RunOutcome>)
      try {
        const refused = await refusalOf(deps.hooks.run(write('create')))
        expect(refused).toMatchObject({ status, code, message })
        expect(refused.details).toMatchObject({ runId: 'run1', runStatus: outcome.status })
      } finally {
        await triggers.close()
      }
    },
  )

  it('stops at the first refusing flow: later flows do not run', async () => {
    const first = makeFlow('event_filter', { events: ['record.delete'] })
    const second = makeFlow('event_filter', { events: ['record.delete'] })
    const { deps, runs, triggers } = await setup(
      (call) => (call.flow.id === first.id ? { status: 'failed', error: { code: 'x', message: 'no' } } : {}),
      [first, second],
    )
    try {
      await refusalOf(deps.hooks.run(write('delete')))
      expect(runs.calls.map((c) => c.flow.id)).toEqual([first.id])
    } finally {
      await triggers.close()
    }
  })

  it('filters a restore as record.update and ignores data output for delete and restore', async () => {
    const flow = makeFlow('event_filter', { events: ['record.update', 'record.delete'] })
    const { deps, runs, triggers } = await setup(() => ({ steps: { data: { title: 'x' } } }), [flow])
    try {
      expect(await deps.hooks.run(write('restore'))).toEqual({})
      expect(await deps.hooks.run(write('delete'))).toEqual({})
      expect(runs.calls.map((c) => c.trigger.event)).toEqual(['record.update', 'record.delete'])
      // A create is not in this flow's events.
      await deps.hooks.run(write('create'))
      expect(runs.calls).toHaveLength(2)
    } finally {
      await triggers.close()
    }
  })

  it('respects the collection scope, and removes its hook on close', async () => {
    const { deps, runs, triggers } = await setup(
      () => ({ status: 'failed', error: { code: 'x', message: 'no' } }),
      [makeFlow('event_filter', { events: ['record.create'] }, { collections: ['notes'] })],
    )
    expect(await deps.hooks.run(write('create'))).toEqual({ title: 'draft' })
    expect(runs.calls).toEqual([])
    await triggers.close()
  })
})

describe('event_filter: a flow writing records itself', () => {
  it('does not filter the writes its own run makes (no endless recursion), but other filter flows still do', async () => {
    const self = makeFlow('event_filter', { events: ['record.create'] })
    const other = makeFlow('event_filter', { events: ['record.create'] })
    const t = await setup(undefined, [self, other])
    const deps = t.deps
    // Wrap runNow so the self flow's run makes a nested write through the hooks, in its own async context.
    const runNow = t.runs.runs.runNow.bind(t.runs.runs)
    let nestedWrites = 0
    t.runs.runs.runNow = async (flow, trigger, initiator, options) => {
      // The self flow's run creates a record of the same collection, as a crud step would, inside its run.
      if (flow.id === self.id && nestedWrites++ < 3) {
        await deps.hooks.run(write('create', { title: 'made by the flow' }))
      }
      return runNow(flow, trigger, initiator, options)
    }
    try {
      await deps.hooks.run(write('create'))
      // Outer write: self (whose nested write is filtered by other only), then other.
      expect(
        t.runs.calls.map(
          (c) =>
            `${c.flow.id === self.id ? 'self' : 'other'}:${(c.trigger.body as { data: { title: string } }).data.title}`,
        ),
      ).toEqual(['other:made by the flow', 'self:draft', 'other:draft'])
    } finally {
      await t.triggers.close()
    }
  })
})
