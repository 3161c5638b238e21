import { describe, expect, it } from 'vitest'
import { principals, type Principal } from '../../../lib/principal.js'
import type { FileUploadEvent } from '../../files/index.js'
import { createTriggers } from './create-triggers.js'
import { fakeDeps, makeFlow, settle } from './fakes.js'

const person = principals.capability({
  homeProjectId: 'p1',
  userId: 'u1',
  roleId: 'r1',
  roleName: 'editor',
  superAdmin: false,
})

describe('app_event', () => {
  it('starts the flows listening to a sign-in, initiated by the person as they are now', async () => {
    const asked: string[] = []
    const { deps, flows, runs } = fakeDeps({
      personOf: async (projectId, userId) => (asked.push(`${projectId}/${userId}`), person),
    })
    const logins = makeFlow('app_event', { events: ['user.login'] })
    await flows.put(logins)
    await flows.put(makeFlow('app_event', { events: ['file.upload'] }))
    await flows.put(makeFlow('app_event', { events: ['user.login'] }, { projectId: 'p2' }))
    const triggers = await createTriggers(deps)
    try {
      const login = {
        projectId: 'p1',
        userId: 'u1',
        method: 'email',
        principal: { id: 'u1', kind: 'user' as const, role: 'editor' },
        at: 1,
      }
      deps.events.emit('user.login', login)
      await settle()
      expect(asked).toEqual(['p1/u1'])
      expect(runs.calls).toEqual([
        expect.objectContaining({
          flow: logins,
          initiator: person,
          trigger: { type: 'app_event', event: 'user.login', collection: null, method: null, body: login },
        }),
      ])
    } finally {
      await triggers.close()
    }
  })

  it('starts upload flows; a key upload has no person to initiate, and no flow means no lookup of the person', async () => {
    let lookedUp = 0
    const { deps, flows, runs } = fakeDeps({ personOf: async (): Promise<Principal | null> => (lookedUp++, person) })
    const triggers = await createTriggers(deps)
    try {
      const upload = {
        projectId: 'p1',
        file: { id: 'f1' },
        via: 'proxy',
        principal: { id: 'k1', kind: 'api_key', role: 'api' },
        at: 1,
      } as unknown as FileUploadEvent
      deps.events.emit('file.upload', upload)
      await settle()
      expect(runs.calls).toEqual([])
      expect(lookedUp).toBe(0)
      await flows.put(makeFlow('app_event', { events: ['user.login', 'file.upload'] }))
      deps.events.emit('file.upload', upload)
      await settle()
      expect(runs.calls).toEqual([
        expect.objectContaining({
          initiator: null,
          trigger: expect.objectContaining({ event: 'file.upload', body: upload }),
        }),
      ])
      expect(lookedUp).toBe(0)
    } finally {
      await triggers.close()
    }
  })
})
