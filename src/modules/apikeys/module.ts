import type { AppModule } from '../../lib/module.js'
import type { UsersService } from '../users/index.js'
import { apiKeysRoutes } from './routes.js'
import { createApiKeysService, type ApiKeysDeps } from './service.js'

/** `sk-` API keys, resolved with their creator's current role (none once the creator is gone or banned). */
export async function createApiKeysModule(
  deps: Omit<ApiKeysDeps, 'creatorRole'> & { users: Pick<UsersService, 'findRow'> },
) {
  const { users, ...rest } = deps
  const service = await createApiKeysService({
    ...rest,
    creatorRole: async (userId) => {
      const user = await users.findRow(userId)
      return user && !user.banned ? user.role_id : null
    },
  })
  return {
    service,
    routers: ({ security }) => [apiKeysRoutes(service, security)],
    close: () => service.close(),
  } satisfies AppModule
}
