import type { AppModule } from '../../lib/module.js'
import { createObservers } from '../../lib/observers.js'
import { usersRoutes } from './routes.js'
import { createUsersService, type UserChange, type UsersDeps } from './service.js'

/**
 * Accounts. A change that must take effect on the user's very next request (role, ban, password,
 * deletion) is told to `onChange` listeners before the changing request answers; the auth module,
 * built after this one, registers what each change ends (sessions, links, cached keys).
 */
export function createUsersModule(deps: Omit<UsersDeps, 'onChange'>) {
  const changes = createObservers<[userId: string, change: UserChange]>()
  const service = createUsersService({ ...deps, onChange: changes.notify })
  return {
    service,
    onChange: { add: changes.add },
    routers: ({ security }) => [usersRoutes(service, security)],
  } satisfies AppModule
}
