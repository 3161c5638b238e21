import { describe, expect, it } from 'vitest'
import { isPerson, principals, requirePerson, type Principal } from './principal.js'

const person = { homeProjectId: 'p1', userId: 'u1', roleId: 'r1', roleName: 'editor', superAdmin: false }

const kinds: { name: string; principal: Principal; person: boolean; refusal: string | null }[] = [
  { name: 'a session', principal: principals.user(person, { id: 's1', expiresAt: 10 }), person: true, refusal: null },
  { name: 'a capability token', principal: principals.capability(person), person: true, refusal: null },
  {
    name: 'a key bound to a user',
    principal: principals.apiKey({ id: 'k1', capabilities: ['collections/*:read'] }, person),
    person: true,
    refusal: null,
  },
  {
    name: 'a service key',
    principal: principals.serviceKey({ id: 'k2', projectId: 'p1', capabilities: ['*:manage'] }),
    person: false,
    refusal: 'forbidden',
  },
  { name: 'an anonymous caller', principal: principals.anonymous('p1'), person: false, refusal: 'unauthorized' },
  { name: 'system work', principal: principals.system('p1', 'files.cleanup'), person: false, refusal: 'forbidden' },
]

describe('principals', () => {
  it.each(kinds)('$name: isPerson and requirePerson agree', ({ principal, person: expected, refusal }) => {
    expect(isPerson(principal)).toBe(expected)
    if (refusal === null) expect(requirePerson(principal)).toBe('u1')
    else expect(() => requirePerson(principal)).toThrow(expect.objectContaining({ code: refusal }))
  })

  it('system work is never a person, even with a user id forced onto it', () => {
    const forged: Principal = { ...principals.system('p1'), userId: 'u1' }
    expect(isPerson(forged)).toBe(false)
    expect(() => requirePerson(forged, 'Changing a password')).toThrow(
      expect.objectContaining({ code: 'forbidden', message: expect.stringContaining('system work') }),
    )
  })

  it('a system principal names why it acts, holds no role and no credential', () => {
    expect(principals.system('p1', 'structure.repair')).toMatchObject({
      kind: 'system',
      projectId: 'p1',
      homeProjectId: 'p1',
      userId: null,
      roleId: null,
      roleName: 'system',
      superAdmin: false,
      sessionId: null,
      apiKeyId: null,
      capabilities: null,
      reason: 'structure.repair',
    })
  })

  it('a key holds the creator role but the name api, and its own capabilities', () => {
    const key = principals.apiKey({ id: 'k1', capabilities: ['a/b:read'] }, { ...person, projectId: 'p2' })
    expect(key).toMatchObject({
      kind: 'api_key',
      userId: 'u1',
      roleId: 'r1',
      roleName: 'api',
      projectId: 'p2',
      homeProjectId: 'p1',
      capabilities: ['a/b:read'],
    })
    expect(Object.isFrozen(key)).toBe(true)
  })
})
