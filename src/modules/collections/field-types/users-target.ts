import type { FieldDef } from './field-def.js'

/**
 * The `relationConfig.targetCollection` that names the project's users (decision 061). `users` is a reserved
 * collection name (a collection can never be called so), so the target cannot collide with a collection, and
 * it is the name a new user tries first.
 */
export const usersTarget = 'users'

/** What a relation to users shows of an account: its public profile; `email` only to callers with system/users:read. */
export const userProfileFields = ['id', 'name', 'email'] as const

/** Whether a relation field points at the project's users rather than a collection. */
export const targetsUsers = (def: FieldDef | undefined): boolean =>
  def?.type === 'relation' && def.relationConfig?.targetCollection === usersTarget

/** The refusal of a lookup or rollup through a relation to users: accounts are not records; expand shows them. */
export const notThroughUsers = (relation: string, what: 'lookups' | 'rollups'): string =>
  `relation "${relation}" points at the project's users, which ${what} do not read; expand it to show the profile`
