import { describe, expect, it } from 'vitest'
import { testPrincipal } from '../../../test/support/principals.js'
import type { Opened } from './context.js'
import type { UserDirectory, UserProfile } from './user-directory.js'
import { followUsers, loadUsersInFilter, userPathLimits, type UsersInFilter } from './user-paths.js'

/** An opened collection of project `p` whose directory holds `count` users; the caller sees profiles and emails as given. */
function openedWith(count: number, sees: { profiles: boolean; emails: boolean }): Opened {
  const all: UserProfile[] = Array.from({ length: count }, (_, i) => ({ id: `u${i}`, name: `n${i}`, email: null }))
  const users: UserDirectory = {
    members: async () => new Map(),
    page: async (_projectId, limit) => all.slice(0, limit),
    seesProfiles: () => sees.profiles,
    seesEmails: async () => sees.emails,
  }
  return { principal: testPrincipal(), collection: { projectId: 'p' }, users } as unknown as Opened
}

const step = { hops: 1, outer: 'tasks', where: 'filter.assignee.name' }
const some: UsersInFilter = { profiles: [{ id: 'u1', name: 'Sam', email: 's@x' }], withEmail: false }

describe('loadUsersInFilter', () => {
  it('loads the project users, with whether emails are readable', async () => {
    const loaded = await loadUsersInFilter(openedWith(3, { profiles: true, emails: true }), step.where)
    expect(loaded?.profiles).toHaveLength(3)
    expect(loaded?.withEmail).toBe(true)
  })

  it('is null for a caller who sees no profile (anonymous)', async () => {
    expect(await loadUsersInFilter(openedWith(3, { profiles: false, emails: false }), step.where)).toBeNull()
  })

  it(`accepts ${userPathLimits.users} users and refuses one more with 400 naming the path`, async () => {
    const at = userPathLimits.users
    expect(
      (await loadUsersInFilter(openedWith(at, { profiles: true, emails: false }), step.where))?.profiles,
    ).toHaveLength(at)
    await expect(
      loadUsersInFilter(openedWith(at + 1, { profiles: true, emails: false }), step.where),
    ).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringContaining('filter.assignee.name') })
  })
})

describe('followUsers', () => {
  it('resolves a profile field to a text column under an EXISTS', () => {
    const resolved = followUsers(some, 'assignee', ['name'], step)
    expect(resolved).toMatchObject({ column: '__via1.name', type: 'text' })
    expect(typeof resolved.through).toBe('function')
  })

  it.each([
    ['email without system/users:read', some, ['email']],
    ['any field for a caller who sees no profile', null, ['name']],
    ['a project without users', { profiles: [], withEmail: true }, ['id']],
  ] as const)('matches nothing for %s', (_, users, rest) => {
    expect(followUsers(users, 'assignee', rest, step).through).toBe(false)
  })

  it('resolves email for a caller with system/users:read', () => {
    expect(followUsers({ ...some, withEmail: true }, 'assignee', ['email'], step).column).toBe('__via1.email')
  })

  it.each([[['password_hash']], [['role']], [['name', 'first']], [[]], [['__proto__']]])(
    'refuses %j with 400, whoever asks',
    (rest) => {
      for (const users of [some, null]) {
        expect(() => followUsers(users, 'assignee', rest, step)).toThrow(
          expect.objectContaining({ code: 'invalid_request' }),
        )
      }
    },
  )
})
