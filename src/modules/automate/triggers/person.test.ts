import { describe, expect, it } from 'vitest'
import { createPersonOf } from './person.js'

describe('personOf', () => {
  const users: Record<string, { project_id: string; role_id: string; banned: boolean | number }> = {
    u1: { project_id: 'p1', role_id: 'r-editor', banned: false },
    banned: { project_id: 'p1', role_id: 'r-editor', banned: 1 },
    noRole: { project_id: 'p1', role_id: 'r-gone', banned: false },
  }
  const personOf = createPersonOf({
    findRow: async (id) => users[id] ?? null,
    roleById: async (_p, id) => (id === 'r-editor' ? { name: 'editor' } : null),
  })

  it('rebuilds the person with their current role and no session', async () => {
    expect(await personOf('p1', 'u1')).toMatchObject({
      kind: 'user',
      projectId: 'p1',
      userId: 'u1',
      roleId: 'r-editor',
      roleName: 'editor',
      superAdmin: false,
      sessionId: null,
    })
  })

  it.each(['banned', 'noRole', 'missing'])('gives nobody for %s', async (id) => {
    expect(await personOf('p1', id)).toBeNull()
  })

  it('gives nobody for a person of another project', async () => {
    expect(await personOf('p2', 'u1')).toBeNull()
  })
})
