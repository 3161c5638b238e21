import { sql, type Expression, type SqlBool } from 'kysely'
import { AppError } from '../../lib/errors.js'
import type { ResolvedField } from '../../lib/filter/index.js'
import { userProfileFields } from '../collections/index.js'
import type { Opened } from './context.js'
import type { UserProfile } from './user-directory.js'

/**
 * How many users a project may have for a filter to follow a relation to them. The users live in the system
 * database, which one statement of a collection's database cannot reach: the project's users are inlined
 * into the statement (a VALUES list, three parameters each), which stays well within both databases'
 * parameter limits up to here. Past it a path through users is 400; filter on the id instead.
 */
export const userPathLimits = { users: 1000 } as const

/** The project's users as a filter through a relation to them sees them; null: the caller sees no profiles. */
export interface UsersInFilter {
  readonly profiles: readonly UserProfile[]
  readonly withEmail: boolean
}

/** Loads the users a filter through a relation to users compares (once per request). Throws invalid_request. */
export async function loadUsersInFilter(at: Opened, where: string): Promise<UsersInFilter | null> {
  if (!at.users.seesProfiles(at.principal)) return null
  const profiles = await at.users.page(at.collection.projectId, userPathLimits.users + 1)
  if (profiles.length > userPathLimits.users) {
    throw new AppError(
      'invalid_request',
      `${where}: the project has more than ${userPathLimits.users} users, past which a filter does not follow a ` +
        'relation to users; filter on the id (e.g. $CURRENT_USER) instead',
      { field: where.replace(/^filter\./, '') },
    )
  }
  return { profiles, withEmail: await at.users.seesEmails(at.principal) }
}

/** Every comparison on it is false: a path to a profile field the caller may not read. */
const nothing: ResolvedField = Object.freeze({ column: 'id', jsonPath: [], type: 'json', through: false })

/**
 * A profile field reached through a relation to users (`assignee.name`, decision 061): an EXISTS over the
 * project's users, inlined, as 059's EXISTS over a target collection. `email` only for a caller with
 * system/users:read and no profile at all for an anonymous caller: otherwise the path matches nothing, as a
 * field the caller may not read does through a collection. Throws invalid_request (not a profile field).
 */
export function followUsers(
  users: UsersInFilter | null,
  relation: string,
  rest: readonly string[],
  step: { hops: number; outer: string; where: string },
): ResolvedField {
  const [field, ...deeper] = rest
  if (field === undefined || deeper.length > 0 || !(userProfileFields as readonly string[]).includes(field)) {
    throw new AppError(
      'invalid_request',
      `${step.where}: ${relation} leads to users, whose fields a filter may name are ${userProfileFields.join(', ')}`,
      { field: step.where.replace(/^filter\./, '') },
    )
  }
  if (!users || (field === 'email' && !users.withEmail) || users.profiles.length === 0) return nothing
  const alias = `__via${step.hops}`
  // Emails go into the statement only for a caller who may read them, though nothing else could compare them.
  const values = sql.join(users.profiles.map((p) => sql`(${p.id}, ${p.name}, ${users.withEmail ? p.email : null})`))
  // VALUES names its columns column1… on both SQLite and PostgreSQL; they are renamed here.
  const rows = sql`select column1 as id, column2 as name, column3 as email from (values ${values}) as __users`
  const key = sql.ref(`${step.outer}.${relation}`)
  return Object.freeze({
    column: `${alias}.${field}`,
    jsonPath: [],
    type: 'text',
    through: (condition: Expression<SqlBool>) =>
      sql<SqlBool>`exists (select 1 from (${rows}) as ${sql.id(alias)} where ${sql.ref(`${alias}.id`)} = ${key} and ${condition})`,
  })
}
