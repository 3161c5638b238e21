import { z } from 'zod'
import { AppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import {
  CreateRoleSchema,
  grantsCreateShape,
  ReplaceGrantsSchema,
  roleCreateShape,
  UpdateRoleSchema,
  type AccessService,
  type Role,
} from '../../access/index.js'
import { accessCreateShape, type CollectionsService } from '../../collections/index.js'
import { parseBody, resourceProvider, type BrickProvider, type LiveResource } from './provider.js'

export interface AccessServices {
  access: AccessService
  collections: CollectionsService
}

/** Resources whose writes hand out rights: a blueprint's grants never include them. */
const guarded = new Set(['system/roles', 'system/api-keys', 'system/users', 'system/tenants'])

/** A grants brick names its role by name; the rest is PUT /roles/:id/grants's body. */
const GrantsBrickSchema = ReplaceGrantsSchema.extend({ role: z.string().min(1).max(50) }).strict()

/** An access brick names its collection; the rest is the access config of PATCH /collections/:name. */
const AccessBrickSchema = z.strictObject({
  collection: z.string().min(1).max(100),
  accessControl: z.strictObject({ preset: z.enum(['private', 'team', 'public']), sharing: z.boolean() }),
})

const teamAccess = { preset: 'team', sharing: false } as const

/** role, grants and access bricks. */
export function accessProviders(s: AccessServices): BrickProvider[] {
  const roleOf = async (actor: Principal, id: string): Promise<Role> => {
    const role = (await s.access.listRoles(actor)).find((r) => r.id === id)
    if (!role) throw new AppError('not_found', 'Role not found')
    return role
  }
  const roles = resourceProvider<Role, z.output<typeof CreateRoleSchema>, z.output<typeof UpdateRoleSchema>>({
    kind: 'role',
    route: '/api/v1/roles',
    createSchema: CreateRoleSchema,
    updateSchema: UpdateRoleSchema,
    shape: roleCreateShape,
    key: ['name'],
    idOf: (role) => role.id,
    all: (actor) => s.access.listRoles(actor),
    get: roleOf,
    create: (actor, input) => s.access.createRole(actor, input),
    update: (actor, id, input) => s.access.updateRole(actor, id, input),
    remove: (actor, id) => s.access.deleteRole(actor, id),
  })

  // A role's grants are one resource: its ref is the role's id; writing them is replacing them whole.
  const grantsLive = async (actor: Principal, role: Role): Promise<LiveResource> => ({
    ref: role.id,
    shape: { role: role.name, ...grantsCreateShape(await s.access.grantsOf(actor, role.id)) },
  })
  const writeGrants = async (actor: Principal, ref: string, desired: Record<string, unknown>) => {
    const body = parseBody(GrantsBrickSchema, desired)
    await s.access.replaceGrants(actor, ref, body.grants)
    return grantsLive(actor, await roleOf(actor, ref))
  }
  const grants: BrickProvider = {
    kind: 'grants',
    notCompared: [],
    immutable: ['role'],
    comparable: (shape) => shape,
    // A document never widens who may hand out rights (spec: grant.escalates_installer).
    check: async (_actor, desired) => {
      const wide = (desired.grants as { resource: string; action: string }[]).find(
        (g) => g.resource.includes('*') || (guarded.has(g.resource) && g.action !== 'read'),
      )
      return wide
        ? {
            code: 'grant.escalates_installer',
            message: `${wide.resource}:${wide.action} is not for a blueprint to give: grant it by hand`,
          }
        : null
    },
    // A role made by an earlier action of the same plan has no id yet: the path names it by `${role:<name>}`.
    calls: (desired, live) => [
      {
        method: 'PUT',
        path: `/api/v1/roles/${live ? encodeURIComponent(live.ref) : `\${role:${String(desired.role)}}`}/grants`,
        body: { grants: desired.grants },
      },
    ],
    desired: (body) => {
      const parsed = parseBody(GrantsBrickSchema, body)
      return { role: parsed.role, ...grantsCreateShape(parsed.grants) }
    },
    async find(actor, desired) {
      const role = (await s.access.listRoles(actor)).find((r) => r.name === desired.role)
      return role ? [await grantsLive(actor, role)] : []
    },
    async read(actor, ref) {
      const role = (await s.access.listRoles(actor)).find((r) => r.id === ref)
      return role ? grantsLive(actor, role) : null
    },
    // One resource per role the caller sees: its grants (reading them is the caller's own check).
    async list(actor) {
      const out: LiveResource[] = []
      for (const role of await s.access.listRoles(actor)) out.push(await grantsLive(actor, role))
      return out
    },
    async create(actor, desired) {
      const role = (await s.access.listRoles(actor)).find((r) => r.name === desired.role)
      if (!role) throw new AppError('not_found', `No role named "${String(desired.role)}"`, { role: desired.role })
      return writeGrants(actor, role.id, desired)
    },
    update: writeGrants,
    // A grants brick removed leaves its role without grants.
    remove: async (actor, ref) => void (await s.access.replaceGrants(actor, ref, [])),
    removeCalls: (live) => [
      { method: 'PUT', path: `/api/v1/roles/${encodeURIComponent(live.ref)}/grants`, body: { grants: [] } },
    ],
  }

  // A collection's access config: always there while the collection is; written by a PATCH carrying it alone.
  const accessLive = async (actor: Principal, name: string): Promise<LiveResource> => ({
    ref: name,
    shape: accessCreateShape(await s.collections.visible(actor, name)),
  })
  const writeAccess = async (actor: Principal, name: string, desired: Record<string, unknown>) => {
    const body = parseBody(AccessBrickSchema, desired)
    await s.collections.update(actor, name, { accessControl: body.accessControl })
    return accessLive(actor, name)
  }
  const access: BrickProvider = {
    kind: 'access',
    notCompared: [],
    immutable: ['collection'],
    comparable: (shape) => shape,
    calls: (desired) => [
      {
        method: 'PATCH',
        path: `/api/v1/collections/${encodeURIComponent(String(desired.collection))}`,
        body: { accessControl: desired.accessControl },
      },
    ],
    desired: (body) => parseBody(AccessBrickSchema, body),
    async find(actor, desired) {
      const live = await this.read(actor, String(desired.collection))
      return live ? [live] : []
    },
    async read(actor, ref) {
      try {
        return await accessLive(actor, ref)
      } catch (err) {
        if (err instanceof AppError && (err.code === 'not_found' || err.code === 'collection_not_found')) return null
        throw err
      }
    },
    // One resource per collection the caller sees.
    list: async (actor) =>
      (await s.collections.visibleTo(actor)).map((c) => ({ ref: c.name, shape: accessCreateShape(c) })),
    create: (actor, desired) => writeAccess(actor, String(desired.collection), desired),
    update: (actor, ref, desired) => writeAccess(actor, ref, desired),
    // Without its brick a collection goes back to role grants alone.
    remove: async (actor, ref) => void (await s.collections.update(actor, ref, { accessControl: teamAccess })),
    removeCalls: (live) => [
      {
        method: 'PATCH',
        path: `/api/v1/collections/${encodeURIComponent(live.ref)}`,
        body: { accessControl: teamAccess },
      },
    ],
  }
  return [roles, grants, access]
}
