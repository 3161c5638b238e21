import type { AppModule } from '../../lib/module.js'
import type { Principal } from '../../lib/principal.js'
import { createObservers } from '../../lib/observers.js'
import { usersRoutes } from './routes.js'
import { createUsersService, type UserChange, type UsersDeps } from './service.js'

/**
 * Accounts. A change that must take effect on the user's very next request (role, ban, password,
 * deletion) is told to `onChange` listeners before the changing request answers; the auth module,
 * built after this one, registers what each change ends (sessions, links, cached keys).
 */
export function createUsersModule(deps: Omit<UsersDeps, 'onChange' | 'beforeDelete'>) {
  const changes = createObservers<[userId: string, change: UserChange]>()
  const deleting = createObservers<[projectId: string, userId: string, actor: Principal]>()
  const service = createUsersService({ ...deps, onChange: changes.notify, beforeDelete: deleting.notify })
  return {
    service,
    onChange: { add: changes.add },
    /** Where records register the onDelete of relations to users: before the account goes, a throw keeps it. */
    beforeDelete: { add: deleting.add },
    routers: ({ security }) => [usersRoutes(service, security)],
  } satisfies AppModule
}
