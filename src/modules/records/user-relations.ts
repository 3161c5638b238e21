import { AppError, isAppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import { usersTarget, type FieldDef } from '../collections/index.js'
import { readValue } from './codec.js'
import type { Opened, RecordsDeps } from './context.js'
import type { ApiRecord } from './events.js'
import { createWritePipeline } from './pipeline.js'
import { applyCascade, cascadeIntents, planCascade, type CascadePlan } from './relations.js'
import type { Row } from './store.js'
import { profileFor } from './user-directory.js'

// Relations to the project's users (decision 061): what their expand shows, and what deleting an account
// does to the records that point at it.

/** The user ids a row holds in a relation to users: one (belongsTo) or a list (hasMany). */
function userIdsOf(source: Opened, def: FieldDef, row: Row): string[] {
  const value = readValue(def, row[def.name], source.shape.kind)
  if (typeof value === 'string') return [value]
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
}

/**
 * Expands a relation to users on a page of records: each id becomes the user's public profile (id, name;
 * email too for a caller with system/users:read), read in one query. An id the caller may not see as a user
 * (an anonymous caller, an id that is no user of this project) stays the id: never null, and never a sign
 * of whether such an account exists elsewhere. Throws invalid_request (a path beyond users).
 */
export async function expandUsers(
  source: Opened,
  def: FieldDef,
  rows: readonly Row[],
  records: ApiRecord[],
  children: readonly string[][],
): Promise<void> {
  if (children.length > 0) {
    throw new AppError('invalid_request', `expand: "${def.name}" leads to users, which have no relations to expand`, {
      field: def.name,
    })
  }
  const many = def.relationConfig!.relationType === 'hasMany'
  const { principal } = source
  const visible = source.users.seesProfiles(principal)
  const ids = visible ? [...new Set(rows.flatMap((row) => userIdsOf(source, def, row)))] : []
  const profiles = await source.users.members(source.collection.projectId, ids)
  const withEmail = profiles.size > 0 && (await source.users.seesEmails(principal))
  rows.forEach((row, i) => {
    const shown = userIdsOf(source, def, row).map((id) => {
      const profile = profiles.get(id)
      return profile ? profileFor(profile, withEmail) : id
    })
    records[i]![def.name] = many ? shown : (shown[0] ?? null)
  })
}

/** The plan of what deleting a user does to the records pointing at it; restrict is 409 naming the collection, field and count. */
async function planUserDeletion(deps: RecordsDeps, projectId: string, userId: string): Promise<CascadePlan> {
  try {
    return await planCascade(deps, { name: usersTarget, projectId }, [userId], true)
  } catch (err) {
    const details = isAppError(err) ? (err.details as { collection?: string; field?: string; count?: number }) : null
    if (!isAppError(err) || err.code !== 'conflict' || !details?.field) throw err
    throw new AppError(
      'conflict',
      `${details.count} record(s) of ${details.collection} refuse the deletion of this user (${details.field}: ` +
        'onDelete restrict, or a required field), directly or through a record it would cascade to; change them first',
      details,
    )
  }
}

/**
 * The users module's `beforeDelete` listener: applies the onDelete of every relation to users as a permanent
 * delete of a record would (set-null clears the field, a hasMany list loses the id, cascade deletes the
 * records, restrict and a required set-null refuse with 409), soft-deleted records included, before the
 * account goes. The writes are the deleting administrator's: hooked and published as theirs, whatever their
 * grants on those collections (schema rules, as a foreign key's). Throws conflict, or what a hook throws.
 */
export function userDeletionCleanup(deps: RecordsDeps) {
  const pipeline = createWritePipeline(deps)
  return async (projectId: string, userId: string, actor: Principal): Promise<void> => {
    const plan = await planUserDeletion(deps, projectId, userId)
    const intents = cascadeIntents(plan)
    if (intents.length === 0) return
    await pipeline.run(actor, intents, async (data) => ({
      committed: await applyCascade(plan, data, deps.clock.seconds()),
      result: undefined,
    }))
  }
}
