import { describe, expect, it } from 'vitest'
import { principalSnapshot } from '../../../lib/events/index.js'
import { principals } from '../../../lib/principal.js'
import { withActingPrincipal } from '../../records/events.js'
import { createTriggers } from './create-triggers.js'
import { fakeDeps, makeFlow, settle } from './fakes.js'

const editor = principals.user(
  { homeProjectId: 'p1', userId: 'u1', roleId: 'r-editor', roleName: 'editor', superAdmin: false },
  { id: 's1', expiresAt: 2e9 },
)

function recordEvent(collection = 'tasks', projectId = 'p1') {
  const event = {
    projectId,
    collection,
    before: null,
    after: { id: 'rec1', title: 'Write the docs' },
    principal: principalSnapshot(editor),
    at: 1764115200,
  }
  return withActingPrincipal(event, editor)
}

describe('event_action', () => {
  it('starts a run of each matching flow after the event, with the payload as $trigger.body and the writer as initiator', async () => {
    const { deps, flows, runs } = fakeDeps()
    const matching = makeFlow('event_action', { events: ['record.create'] }, { collections: ['tasks'] })
    const everywhere = makeFlow('event_action', { events: ['record.create', 'record.delete'] })
    await flows.put(matching)
    await flows.put(everywhere)
    // Not started: another event, another collection, another project, inactive, never published, another trigger.
    await flows.put(makeFlow('event_action', { events: ['record.update'] }))
    await flows.put(makeFlow('event_action', { events: ['record.create'] }, { collections: ['notes'] }))
    await flows.put(makeFlow('event_action', { events: ['record.create'] }, { projectId: 'p2' }))
    await flows.put(makeFlow('event_action', { events: ['record.create'] }, { status: 'inactive' }))
    await flows.put(makeFlow('event_action', { events: ['record.create'] }, { published: false }))
    await flows.put(makeFlow('event_filter', { events: ['record.create'] }))
    const triggers = await createTriggers(deps)
    try {
      const event = recordEvent()
      deps.events.emit('record.create', event)
      // The writer never waits: nothing has started when emit returns.
      expect(runs.calls).toEqual([])
      await settle()
      expect(runs.calls.map((c) => c.flow.id).sort()).toEqual([matching.id, everywhere.id].sort())
      for (const call of runs.calls) {
        expect(call.mode).toBe('start')
        expect(call.initiator).toBe(editor)
        expect(call.trigger).toEqual({
          type: 'event_action',
          event: 'record.create',
          collection: 'tasks',
          method: null,
          body: JSON.parse(JSON.stringify(event)),
        })
      }
    } finally {
      await triggers.close()
    }
  })

  it('logs a run that cannot start and starts the others; after close nothing starts', async () => {
    const { deps, flows, runs } = fakeDeps()
    const failing = makeFlow('event_action', { events: ['record.delete'] })
    const fine = makeFlow('event_action', { events: ['record.delete'] })
    await flows.put(failing)
    await flows.put(fine)
    const triggers = await createTriggers(deps)
    runs.failStartWith(new Error('quota'), failing.id)
    deps.events.emit('record.delete', recordEvent())
    await settle()
    expect(runs.calls.map((c) => c.flow.id)).toEqual([fine.id])
    await triggers.close()
    deps.events.emit('record.delete', recordEvent())
    await settle()
    expect(runs.calls).toHaveLength(1)
  })
})
