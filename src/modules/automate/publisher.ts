import { principals, type Principal } from '../../lib/principal.js'

/** What rebuilding a publisher needs: accounts, roles and API keys as they are now. */
export interface PublisherSources {
  findRow(id: string): Promise<{ id: string; project_id: string; role_id: string; banned: boolean | number } | null>
  roleById(projectId: string, id: string): Promise<{ id: string; name: string } | null>
  /** An API key by id with its creator's current role; null when revoked, expired or its creator is gone (apikeys.byId). */
  findApiKey(id: string): Promise<{
    id: string
    projectId: string
    userId: string | null
    creatorRoleId: string | null
    capabilities: readonly string[]
  } | null>
}

/**
 * The publisher named by `ref` (`flows.published_by`: a person's id or `key:<id>`) as a principal acting in
 * `projectId` with their rights as they are now (decision 045), or null when they can no longer act: an
 * account deleted, banned or without a role, a key revoked or expired.
 */
export async function publisherPrincipal(
  sources: PublisherSources,
  projectId: string,
  ref: string | null,
): Promise<Principal | null> {
  if (ref === null) return null
  if (ref.startsWith('key:')) {
    const key = await sources.findApiKey(ref.slice('key:'.length))
    if (!key || key.projectId !== projectId) return null
    if (key.userId === null || key.creatorRoleId === null)
      return principals.serviceKey({ id: key.id, projectId: key.projectId, capabilities: key.capabilities })
    const role = await sources.roleById(key.projectId, key.creatorRoleId)
    if (!role) return null
    return principals.apiKey(key, {
      homeProjectId: key.projectId,
      projectId,
      userId: key.userId,
      roleId: role.id,
      roleName: 'api',
      superAdmin: role.name === 'super_admin',
    })
  }
  const user = await sources.findRow(ref)
  if (!user || user.banned) return null
  const role = await sources.roleById(user.project_id, user.role_id)
  if (!role) return null
  const superAdmin = role.name === 'super_admin'
  // Only a super_admin acts outside their own project; anyone else who published here has since moved away.
  if (user.project_id !== projectId && !superAdmin) return null
  return principals.capability({
    homeProjectId: user.project_id,
    projectId,
    userId: user.id,
    roleId: role.id,
    roleName: role.name,
    superAdmin,
  })
}
