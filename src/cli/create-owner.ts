import { migrateSystem } from '../platform.js'
import type { Config } from '../config.js'
import { systemClock } from '../lib/clock.js'
import { createDatabaseRegistry } from '../lib/db/index.js'
import type { Logger } from '../lib/log.js'
import { createMemoryPubSub } from '../lib/pubsub/index.js'
import { createAccessService } from '../modules/access/index.js'
import { createAuditLog, createAuditService } from '../modules/audit/index.js'
import { createProjectsService } from '../modules/projects/index.js'
import { createUsersService } from '../modules/users/index.js'

/** The owner `plinth admin create` made. */
export interface CreatedOwner {
  id: string
  email: string | null
  projectId: string
}

/**
 * Creates the install's first account, its owner (super_admin of the default project), straight in the
 * configured database, as `plinth migrate` opens it: pending system migrations run first, the default
 * project is ensured (with its built-in roles), then `users.signUp`, the method the first HTTP sign-up goes
 * through, with sign-up closed, so it makes the owner or nothing. Only the slice of the app that needs is
 * built (no queue, mail, storage or HTTP): a running server on the same data is left alone. Throws
 * signup_forbidden (an account already exists), already_exists.
 */
export async function createOwner(
  config: Config,
  log: Logger,
  input: { email: string; password: string; name: string },
): Promise<CreatedOwner> {
  const registry = await createDatabaseRegistry({
    kind: config.database.kind,
    dataDir: config.dataDir,
    postgresUrl: config.database.kind === 'postgres' ? config.database.url : undefined,
  })
  const pubsub = createMemoryPubSub()
  try {
    await migrateSystem(registry, log)
    const base = { systemDb: registry.system.db, clock: systemClock, log }
    const auditLog = createAuditLog(base)
    const access = await createAccessService({ ...base, pubsub, audit: auditLog })
    try {
      const audit = createAuditService({ auditLog, access })
      const projects = createProjectsService({
        registry,
        clock: systemClock,
        audit,
        access,
        onCreated: (id) => access.seedBuiltInRoles(id),
      })
      const project = await projects.ensureDefault()
      const users = createUsersService({
        systemDb: registry.system.db,
        dbKind: registry.kind,
        access,
        audit,
        clock: systemClock,
        passwordIterations: config.auth.passwordIterations,
        // Read only by POST /users (an administrator's create), never by sign-up.
        requireEmail: async () => false,
        // No sessions or cached keys exist for a new account: nothing to drop.
        onChange: async () => {},
      })
      const row = await users.signUp(project.id, input, false)
      await audit.record({
        projectId: row.project_id,
        action: 'user.sign_up',
        actor: null,
        actorUserId: row.id,
        target: { type: 'user', id: row.id },
        details: { method: 'cli' },
      })
      return { id: row.id, email: row.email, projectId: row.project_id }
    } finally {
      await access.close()
    }
  } finally {
    await pubsub.close()
    await registry.close()
  }
}
