import type { Principal } from '../../src/lib/principal.js'

/** A signed-in user of project p1 for pure access tests, with any fields overridden. */
export function testPrincipal(over: Partial<Principal> = {}): Principal {
  return {
    kind: 'user',
    projectId: 'p1',
    homeProjectId: 'p1',
    userId: 'u1',
    roleId: 'r1',
    roleName: 'custom',
    superAdmin: false,
    sessionId: 's1',
    sessionExpiresAt: 2_000_000_000,
    apiKeyId: null,
    capabilities: null,
    ...over,
  }
}
