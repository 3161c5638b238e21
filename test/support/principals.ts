import { principals, type PersonRole, type Principal } from '../../src/lib/principal.js'

const person: PersonRole = { homeProjectId: 'p1', userId: 'u1', roleId: 'r1', roleName: 'custom', superAdmin: false }

/** A signed-in user of project p1 for pure access tests, built by the principal factory, with any fields overridden. */
export function testPrincipal(over: Partial<Principal> = {}): Principal {
  return { ...principals.user(person, { id: 's1', expiresAt: 2_000_000_000 }), ...over }
}

/** An `sk-` key of the user u1 of project p1 holding these capabilities. */
export function testApiKey(capabilities: readonly string[], over: Partial<PersonRole> = {}): Principal {
  return principals.apiKey({ id: 'k1', capabilities }, { ...person, ...over })
}

/** A service key of project p1 (bound to nobody) holding these capabilities. */
export function testServiceKey(capabilities: readonly string[]): Principal {
  return principals.serviceKey({ id: 'k1', projectId: 'p1', capabilities })
}
