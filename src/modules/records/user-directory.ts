import type { Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import type { ProfileRow, UsersService } from '../users/index.js'

/** An account as a relation to users reaches it (decision 061): id, name, and email for whom may see it. */
export type UserProfile = ProfileRow

/** Who a relation to users may name and what it shows of them; the users module answers (built before records). */
export interface UserDirectory {
  /** The project's users among these ids, whoever asks (a write's check, an expand before it is shown). */
  members(projectId: string, ids: readonly string[]): Promise<Map<string, UserProfile>>
  /** Up to `limit` of the project's users, by id (a filter through a relation to users compares them). */
  page(projectId: string, limit: number): Promise<UserProfile[]>
  /** Whether the caller sees profiles at all: anyone but an anonymous caller (a project's names are not public). */
  seesProfiles(principal: Principal): boolean
  /** Whether the caller also sees emails: system/users:read, as GET /users would show them. */
  seesEmails(principal: Principal): Promise<boolean>
}

export function createUserDirectory(deps: {
  users: Pick<UsersService, 'profiles' | 'profilePage'>
  access: Pick<AccessService, 'decide'>
}): UserDirectory {
  return {
    async members(projectId, ids) {
      if (ids.length === 0) return new Map()
      const rows = await deps.users.profiles(projectId, ids)
      return new Map(rows.map((row) => [row.id, row]))
    },
    page: (projectId, limit) => deps.users.profilePage(projectId, limit),
    seesProfiles: (principal) => principal.kind !== 'anonymous',
    async seesEmails(principal) {
      if (principal.kind === 'anonymous') return false
      return (await deps.access.decide(principal, 'system/users', 'read')).allowed
    },
  }
}

/** The profile a caller is shown: id and name, and email when it may read users. */
export function profileFor(user: UserProfile, withEmail: boolean): Record<string, unknown> {
  return withEmail ? { id: user.id, name: user.name, email: user.email } : { id: user.id, name: user.name }
}
