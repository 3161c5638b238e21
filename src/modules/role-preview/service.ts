import { AppError, isAppError } from '../../lib/errors.js'
import { principals, requirePerson, type Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import type { RecordsService } from '../records/index.js'
import type { UsersService } from '../users/index.js'

export interface RolePreviewDeps {
  access: Pick<AccessService, 'authorize' | 'roleById'>
  users: Pick<UsersService, 'findRow'>
  records: Pick<RecordsService, 'list'>
}

export interface RolePreview {
  /** Whether the role may list the collection at all. */
  allowed: boolean
  /** Why not, in the server's words, when it may not. */
  reason: string | null
  /** Whose `$CURRENT_USER` the role's rules were read with. */
  as: string
  /** The first rows the role would see, narrowed to the rows and fields the caller may read too. */
  data: Record<string, unknown>[]
  /** Rows of that page the caller may not read itself (left out, only counted). */
  hidden: number
}

/**
 * "What can this role see": a page of a collection read as a person holding the role (docs/permissions.md,
 * decision 079). The preview never shows more than the caller may read: rows and fields are the
 * intersection of the role's view and the caller's own. Throws forbidden (system/roles:read),
 * not_found (role, or `as` outside the project), invalid_request.
 */
export function createRolePreviewService(deps: RolePreviewDeps) {
  return {
    async preview(
      actor: Principal,
      input: { roleId: string; collection: string; as?: string | undefined; limit: number },
    ): Promise<RolePreview> {
      await deps.access.authorize(actor, 'system/roles:read')
      const callerId = requirePerson(actor, 'A role preview')
      const role = await deps.access.roleById(actor.projectId, input.roleId)
      if (!role) throw new AppError('not_found', 'Role not found')
      const asId = input.as ?? callerId
      const user = await deps.users.findRow(asId)
      if (!user || user.project_id !== actor.projectId)
        throw new AppError('not_found', 'No such user in this project', { field: 'as' })
      const holder = principals.capability({
        homeProjectId: actor.projectId,
        userId: asId,
        roleId: role.id,
        roleName: role.name,
        superAdmin: role.name === 'super_admin',
      })
      let theirs: Record<string, unknown>[]
      try {
        const page = await deps.records.list(holder, input.collection, { page: 1, limit: input.limit })
        theirs = page.data as Record<string, unknown>[]
      } catch (err) {
        if (isAppError(err) && ['forbidden', 'unauthorized', 'collection_not_found'].includes(err.code))
          return { allowed: false, reason: err.message, as: asId, data: [], hidden: 0 }
        throw err
      }
      if (theirs.length === 0) return { allowed: true, reason: null, as: asId, data: [], hidden: 0 }
      // The caller's own read of the same rows: what it may not read stays out, field by field too.
      const ids = theirs.map((r) => r.id)
      const mine = await deps.records.list(actor, input.collection, {
        page: 1,
        limit: ids.length,
        filter: JSON.stringify({ id: { _in: ids } }),
      })
      const readable = new Map((mine.data as Record<string, unknown>[]).map((r) => [r.id, r]))
      const data = theirs.flatMap((row) => {
        const own = readable.get(row.id)
        if (!own) return []
        return [Object.fromEntries(Object.entries(row).filter(([key]) => key in own))]
      })
      return { allowed: true, reason: null, as: asId, data, hidden: theirs.length - data.length }
    },
  }
}

export type RolePreviewService = ReturnType<typeof createRolePreviewService>
