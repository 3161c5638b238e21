import { describe, expect, it } from 'vitest'
import { principals } from '../../lib/principal.js'
import { collectionUpdateEvent, type CommittedUpdate } from './events.js'
import type { FieldDef } from './field-types/index.js'

const person = { homeProjectId: 'p1', userId: 'u1', roleId: 'r1', roleName: 'admin', superAdmin: false }
const session = principals.user(person, { id: 'session-secret', expiresAt: 2_000_000_000 })
const key = principals.apiKey({ id: 'k1', capabilities: ['schema/*:update'] }, person)

const status = (values: string[]): FieldDef => ({
  name: 'status',
  type: 'enum',
  required: false,
  unique: false,
  indexed: false,
  enumValues: values,
})
const nothing = { added: [], indexToggled: [], indexesAdded: [], indexesDropped: [] }
const base: CommittedUpdate = {
  actor: session,
  collection: { projectId: 'p1', name: 'tickets' },
  schemaVersion: 3,
  change: nothing,
  fieldChanges: [],
  request: { enumChanges: {} },
  at: 1764115200,
}

describe('collectionUpdateEvent', () => {
  const rows: { name: string; update: Partial<CommittedUpdate>; changes: Record<string, unknown> }[] = [
    {
      name: 'only the access control: every list empty, no optional key',
      update: {},
      changes: { added: [], indexToggled: [], fields: [], indexesAdded: [], indexesDropped: [] },
    },
    {
      name: 'fields added, an index toggled, compound indexes made and dropped: by name',
      update: {
        change: {
          added: [{ name: 'notes' }, { name: 'due' }],
          indexToggled: [{ name: 'title' }],
          indexesAdded: [{ name: 'tickets__ix_1' }],
          indexesDropped: [{ name: 'tickets__ix_0' }],
        },
      },
      changes: {
        added: ['notes', 'due'],
        indexToggled: ['title'],
        fields: [],
        indexesAdded: ['tickets__ix_1'],
        indexesDropped: ['tickets__ix_0'],
      },
    },
    {
      name: 'an enum value removed and mapped: the change with both definitions, and the mapping',
      update: {
        fieldChanges: [
          { kind: 'enumValues', field: 'status', before: status(['open', 'closed']), after: status(['open']) },
        ],
        request: { enumChanges: { status: { closed: 'open' } } },
      },
      changes: {
        ...nothing,
        fields: [{ kind: 'enumValues', field: 'status', before: status(['open', 'closed']), after: status(['open']) }],
        enumChanges: { status: { closed: 'open' } },
      },
    },
    {
      name: 'renames and drops, when the request makes some (empty ones are left out)',
      update: { request: { enumChanges: {}, renames: { title: 'subject' }, drop: ['legacy'] } },
      changes: { ...nothing, fields: [], renames: { title: 'subject' }, drop: ['legacy'] },
    },
    {
      name: 'empty renames and drops are left out',
      update: { request: { enumChanges: {}, renames: {}, drop: [] } },
      changes: { ...nothing, fields: [] },
    },
  ]
  it.each(rows)('$name', ({ update, changes }) => {
    const event = collectionUpdateEvent({ ...base, ...update })
    expect(event).toEqual({
      projectId: 'p1',
      collection: 'tickets',
      schemaVersion: 3,
      changes,
      principal: { id: 'u1', kind: 'user', role: 'admin' },
      at: 1764115200,
    })
    // Plain JSON: a copy (a flow's $trigger.body, a log line) is the event itself.
    expect(JSON.parse(JSON.stringify(event))).toEqual(event)
  })

  it('names who acted by a snapshot only: no session, no key capabilities', () => {
    const bySession = JSON.stringify(collectionUpdateEvent(base))
    expect(bySession).not.toContain('session-secret')
    const byKey = collectionUpdateEvent({ ...base, actor: key })
    expect(byKey.principal).toEqual({ id: 'k1', kind: 'api_key', role: 'api' })
    expect(JSON.stringify(byKey)).not.toContain('schema/*:update')
  })

  it('copies what it is given: a later change of the request does not reach a published event', () => {
    const enumChanges = { status: { closed: 'open' } }
    const drop = ['legacy']
    const event = collectionUpdateEvent({ ...base, request: { enumChanges, drop } })
    enumChanges.status.closed = 'changed'
    drop.push('other')
    expect(event.changes.enumChanges).toEqual({ status: { closed: 'open' } })
    expect(event.changes.drop).toEqual(['legacy'])
  })
})
