import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import { hashPassword } from '../../lib/crypto/index.js'
import { lockTransaction, type DbKind } from '../../lib/db/index.js'
import { AppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import { isSuperAdmin, type Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import type { User } from './schemas.js'
import { createUsersStore, type ProfileRow, type UserRow, type UsersDb } from './store.js'

/** What other modules must hear about a user, to drop cached sessions at once. */
export type UserChange = 'profile' | 'role' | 'banned' | 'password' | 'deleted'

export interface UsersDeps {
  systemDb: Kysely<any>
  dbKind: DbKind
  access: AccessService
  audit: AuditService
  clock: Clock
  passwordIterations: number
  /** The project's `auth.requireEmail` setting. */
  requireEmail: (projectId: string) => Promise<boolean>
  /**
   * Called before an account is deleted, once the actor may delete it: what points at the user is cleaned up
   * or refuses the deletion (records' relations to users, decision 061). A throw leaves the account.
   */
  beforeDelete?: (projectId: string, userId: string, actor: Principal) => Promise<void>
  /** Called after a change that must take effect on the user's very next request. */
  onChange: (userId: string, change: UserChange) => Promise<void>
}

export interface NewUser {
  email?: string | null
  password?: string | null
  name?: string
  username?: string | null
  role: string
}

/** Accounts: creation (including the first owner), reads, and the admin changes of addendum §3. */
export function createUsersService(deps: UsersDeps) {
  const store = createUsersStore(deps.systemDb)
  const { access, clock } = deps

  async function toUser(row: UserRow): Promise<User> {
    const role = await access.roleById(row.project_id, row.role_id)
    return {
      id: row.id,
      email: row.email,
      username: row.username,
      name: row.name,
      role: role?.name ?? 'unknown',
      projectId: row.project_id,
      banned: Boolean(row.banned),
      totpEnabled: Boolean(row.totp_enabled),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      lastSignInAt: row.last_sign_in_at,
    }
  }

  async function buildRow(projectId: string, input: NewUser, roleId: string, emailTrusted: boolean): Promise<UserRow> {
    const now = clock.seconds()
    return {
      id: newId(),
      project_id: projectId,
      role_id: roleId,
      email: input.email ? normaliseEmail(input.email) : null,
      username: input.username ? normaliseUsername(input.username) : null,
      name: input.name?.trim() ?? '',
      password_hash: input.password ? await hashPassword(input.password, deps.passwordIterations) : null,
      banned: false,
      totp_secret: null,
      totp_enabled: false,
      email_trusted: emailTrusted,
      created_at: now,
      updated_at: now,
      last_sign_in_at: null,
    }
  }

  /**
   * An email may be shared only by accounts that all sign in with a username (a shared contact address);
   * an account that signs in by email owns its address alone. Run inside `insertChecked`'s lock, so two
   * requests cannot both pass. Throws already_exists.
   */
  async function assertAvailable(email: string | null, username: string | null, trx: UsersDb): Promise<void> {
    if (username && (await store.byUsername(username, trx))) {
      throw new AppError('already_exists', 'That username is taken', { fields: ['username'] })
    }
    if (!email) return
    const holders = await store.byEmail(email, trx)
    if (holders.length > 0 && (!username || holders.some((h) => !h.username))) {
      throw new AppError('already_exists', 'An account with this email already exists', { fields: ['email'] })
    }
  }

  /** Inserts a new account after checking, under a lock, that its email and username are free. */
  async function insertChecked(row: UserRow, beforeInsert?: (trx: UsersDb) => Promise<void>): Promise<void> {
    await store.transaction(async (trx) => {
      await lockTransaction(trx, deps.dbKind, 'users')
      await assertAvailable(row.email, row.username, trx)
      await beforeInsert?.(trx)
      await store.insert(row, trx)
    })
  }

  async function requireUser(projectId: string, id: string): Promise<UserRow> {
    const row = await store.byId(id)
    if (!row || row.project_id !== projectId) throw new AppError('not_found', 'User not found')
    return row
  }

  /**
   * Refuses what would let an actor reach above themselves: only a super_admin acts on or grants
   * super_admin; an actor without admin access may neither act on someone whose role holds more than
   * the actor does (a new password or a ban would hand them that account), nor give anyone such a role.
   * Throws forbidden, invalid_request (unknown role).
   */
  async function assertMayManage(
    actor: Principal,
    target: UserRow | null,
    newRoleName: string | null,
    projectId: string,
  ): Promise<void> {
    if (target && !isSuperAdmin(actor)) {
      const current = await access.roleById(target.project_id, target.role_id)
      if (current?.name === 'super_admin')
        throw new AppError('forbidden', 'Only a super_admin may change a super_admin')
      if (current) await access.assertMayAssign(actor, target.project_id, current.id)
    }
    if (newRoleName !== null) {
      const role = await access.roleByName(projectId, newRoleName)
      if (!role) throw new AppError('invalid_request', `Unknown role "${newRoleName}"`, { role: newRoleName })
      if (role.name === 'super_admin' && !isSuperAdmin(actor))
        throw new AppError('forbidden', 'Only a super_admin may grant super_admin')
      if (role.adminAccess && !(await access.hasAdminAccess(actor))) {
        throw new AppError('forbidden', 'Only an administrator may grant a role with admin access')
      }
      await access.assertMayAssign(actor, projectId, role.id)
    }
  }

  /** Creates a self-registered account: the install's first becomes super_admin, later ones viewers. */
  async function selfService(
    projectId: string,
    input: Omit<NewUser, 'role'>,
    open: boolean,
    emailTrusted: boolean,
  ): Promise<UserRow> {
    const superAdmin = await access.roleByName(projectId, 'super_admin')
    const viewer = await access.roleByName(projectId, 'viewer')
    if (!superAdmin || !viewer) throw new Error('Built-in roles missing from the default project')
    const row = await buildRow(projectId, { ...input, role: 'viewer' }, viewer.id, emailTrusted)
    await insertChecked(row, async (trx) => {
      const first = (await store.count(trx)) === 0
      if (first) row.role_id = superAdmin.id
      else if (!open) throw new AppError('signup_forbidden', 'Sign-up is closed; ask an administrator for an account')
    })
    return row
  }

  return {
    /**
     * Self-service sign-up into the default project: the very first account of the install becomes its
     * super_admin, even while sign-up is closed; later ones need `open`. Throws signup_forbidden, already_exists.
     */
    async signUp(defaultProjectId: string, input: Omit<NewUser, 'role'>, open: boolean): Promise<UserRow> {
      return selfService(defaultProjectId, input, open, false)
    },

    /** Creates an account in the project (POST /users). Throws invalid_request, already_exists, forbidden. */
    async create(actor: Principal, input: NewUser): Promise<User> {
      await access.authorize(actor, 'system/users:create')
      const projectId = actor.projectId
      if (!input.email && !input.username) throw new AppError('invalid_request', 'An email or a username is required')
      if (!input.email && (await deps.requireEmail(projectId))) {
        throw new AppError('invalid_request', 'An email is required (the project setting auth.requireEmail is on)', {
          fields: ['email'],
        })
      }
      await assertMayManage(actor, null, input.role, projectId)
      const role = (await access.roleByName(projectId, input.role))!
      // An administrator vouches for the address of an account they make.
      const row = await buildRow(projectId, input, role.id, true)
      await insertChecked(row)
      await deps.audit.record({
        projectId,
        action: 'user.created',
        actor,
        target: { type: 'user', id: row.id },
        details: { role: input.role },
      })
      return toUser(row)
    },

    /** One page of the users of the project the caller acts in, oldest first. Throws unauthorized, forbidden. */
    async list(actor: Principal, page: number, limit: number): Promise<{ data: User[]; total: number }> {
      await access.authorize(actor, 'system/users:read')
      const { rows, total } = await store.page(actor.projectId, (page - 1) * limit, limit)
      return { data: await Promise.all(rows.map(toUser)), total }
    },

    /** One user of the project the caller acts in. Throws unauthorized, forbidden, not_found. */
    async get(actor: Principal, id: string): Promise<User> {
      await access.authorize(actor, 'system/users:read')
      return toUser(await requireUser(actor.projectId, id))
    },

    /** Changes name, role, ban or password; role, ban and password apply on the next request. */
    async update(
      actor: Principal,
      id: string,
      patch: { name?: string; role?: string; banned?: boolean; password?: string },
    ): Promise<{ user: User; changes: UserChange[] }> {
      await access.authorize(actor, 'system/users:update')
      const projectId = actor.projectId
      const row = await requireUser(projectId, id)
      await assertMayManage(actor, row, patch.role ?? null, projectId)
      if (patch.banned === true && actor.userId === id) throw new AppError('invalid_request', 'You cannot ban yourself')
      const changes: UserChange[] = []
      const set: Partial<UserRow> = { updated_at: clock.seconds() }
      if (patch.name !== undefined && patch.name.trim() !== row.name) {
        set.name = patch.name.trim()
        changes.push('profile')
      }
      if (patch.role !== undefined) {
        const role = (await access.roleByName(projectId, patch.role))!
        if (role.id !== row.role_id) {
          set.role_id = role.id
          changes.push('role')
        }
      }
      if (patch.banned !== undefined && patch.banned !== Boolean(row.banned)) {
        set.banned = patch.banned
        changes.push('banned')
      }
      if (patch.password !== undefined) {
        set.password_hash = await hashPassword(patch.password, deps.passwordIterations)
        changes.push('password')
      }
      await store.update(id, set)
      for (const change of changes) await deps.onChange(id, change)
      await deps.audit.record({
        projectId,
        action: 'user.updated',
        actor,
        target: { type: 'user', id },
        details: {
          changed: Object.keys(patch),
          ...(patch.role !== undefined ? { role: patch.role } : {}),
          ...(patch.banned !== undefined ? { banned: patch.banned } : {}),
        },
      })
      return { user: await toUser({ ...row, ...set }), changes }
    },

    /**
     * Deletes the account (its sessions and keys go with it), after `beforeDelete` has applied the onDelete of
     * relations to it. Throws not_found, forbidden, invalid_request, conflict (a restrict relation).
     */
    async delete(actor: Principal, id: string): Promise<void> {
      await access.authorize(actor, 'system/users:delete')
      const projectId = actor.projectId
      const row = await requireUser(projectId, id)
      await assertMayManage(actor, row, null, projectId)
      if (actor.userId === id) throw new AppError('invalid_request', 'You cannot delete your own account')
      await deps.beforeDelete?.(projectId, id, actor)
      await store.delete(id)
      await deps.onChange(id, 'deleted')
      await deps.audit.record({ projectId, action: 'user.deleted', actor, target: { type: 'user', id } })
    },

    // For the auth module: credential material never leaves through the API shape above.

    /** The raw row (with credential material) by id, any project; null when missing. */
    findRow: async (id: string): Promise<UserRow | null> => (await store.byId(id)) ?? null,
    /** Accounts with this email (several when it is a shared contact address). */
    findRowsByEmail: (email: string): Promise<UserRow[]> => store.byEmail(normaliseEmail(email)),
    /** The account with this username, or null. */
    findRowByUsername: async (name: string): Promise<UserRow | null> =>
      (await store.byUsername(normaliseUsername(name))) ?? null,
    /** The users of the project among these ids: id, name, email (whoever asks; callers decide what to show). */
    profiles: (projectId: string, ids: readonly string[]): Promise<ProfileRow[]> => store.profiles(projectId, ids),
    /** The project's first `limit` users by id: id, name, email. */
    profilePage: (projectId: string, limit: number): Promise<ProfileRow[]> => store.profilePage(projectId, limit),
    /** The API shape of a row. */
    toUser,
    /** Records a successful sign-in (and a password hash upgraded to the current iteration count). */
    async recordSignIn(id: string, upgradedHash?: string): Promise<void> {
      await store.update(id, {
        last_sign_in_at: clock.seconds(),
        ...(upgradedHash ? { password_hash: upgradedHash } : {}),
      })
    },
    /** Sets a new password (reset flows) and drops the user's sessions. */
    async setPassword(id: string, password: string): Promise<void> {
      await store.update(id, {
        password_hash: await hashPassword(password, deps.passwordIterations),
        updated_at: clock.seconds(),
      })
      await deps.onChange(id, 'password')
    },
    /** Stores the sealed TOTP secret and whether it is active. */
    async setTotp(id: string, sealedSecret: string | null, enabled: boolean): Promise<void> {
      await store.update(id, { totp_secret: sealedSecret, totp_enabled: enabled, updated_at: clock.seconds() })
    },
    /** Creates an account for a social sign-in (no password), under the sign-up rules. */
    createFromProvider: (projectId: string, input: { email: string; name: string }, open: boolean): Promise<UserRow> =>
      selfService(projectId, input, open, true),
    /** Records that the account holder proved the email (a mailed link was used). */
    async trustEmail(id: string): Promise<void> {
      await store.update(id, { email_trusted: true })
    },
    /**
     * Before a provider that vouches for the email is linked to an account whose address was never proven:
     * drops the password and second factor someone else may have set (pre-registration) and ends its sessions.
     */
    async discardUnprovenCredentials(id: string): Promise<void> {
      await store.update(id, {
        password_hash: null,
        totp_secret: null,
        totp_enabled: false,
        email_trusted: true,
        updated_at: clock.seconds(),
      })
      await deps.onChange(id, 'password')
    },
    /** True once any account exists on the instance. */
    hasAnyUser: async (): Promise<boolean> => (await store.count()) > 0,
    /** Whether a username is free (case-insensitive). */
    usernameAvailable: async (name: string): Promise<boolean> => !(await store.byUsername(normaliseUsername(name))),
  }
}

export type UsersService = ReturnType<typeof createUsersService>

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase()
}

export function normaliseUsername(username: string): string {
  return username.trim().toLowerCase()
}
