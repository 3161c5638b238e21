import { testApiKey, testPrincipal, testServiceKey } from '../../../test/support/principals.js'
import { describe, expect, it } from 'vitest'
import { orNode, parseFilter, type FilterNode } from '../../lib/filter/index.js'
import { principals, type PersonRole, type Principal } from '../../lib/principal.js'
import { builtInRoles } from './built-in-roles.js'
import { AppError } from '../../lib/errors.js'
import { decide, fitGrants, reachesAny, type CompiledGrant, type Decision, type RoleRules } from './decide.js'
import { parsePermission } from './permission.js'

// Principals and roles built by hand: `decide` is pure, so nothing here touches a database.

const user = testPrincipal

const superAdmin = user({ roleName: 'super_admin', superAdmin: true })

const apiKey = (capabilities: string[], over: Partial<PersonRole> = {}): Principal => testApiKey(capabilities, over)

const serviceKey = (capabilities: string[]): Principal => testServiceKey(capabilities)

const anonymous: Principal = principals.anonymous('p1')

const system: Principal = principals.system('p1', 'test')

interface GrantOptions {
  filter?: unknown
  fields?: string[]
}

const grant = (permission: string, options: GrantOptions = {}): CompiledGrant => {
  const { resource, action } = parsePermission(permission)
  return {
    resource,
    action,
    itemFilter: options.filter === undefined ? null : parseFilter(options.filter),
    fields: options.fields ?? null,
  }
}

const role = (grants: CompiledGrant[], adminAccess = false, name = 'custom'): RoleRules => ({
  id: 'r1',
  name,
  adminAccess,
  grants,
})

const adminRole = role([], true, 'admin')
const superAdminRole = role([], true, 'super_admin')
const emptyRole = role([])

/** The built-in role's default grants, compiled as the service compiles them. */
const builtIn = (name: string): RoleRules => {
  const spec = builtInRoles.find((r) => r.name === name)!
  return role(
    spec.grants.map((g) => ({
      resource: g.resource,
      action: g.action,
      itemFilter: g.item_filter === undefined ? null : parseFilter(g.item_filter),
      fields: g.fields ? [...g.fields] : null,
    })),
    spec.adminAccess,
    name,
  )
}
const editor = builtIn('editor')
const viewer = builtIn('viewer')
const publicRole = builtIn('public')

const mine = { uploadedBy: { _eq: '$CURRENT_USER' } }
const published = { status: { _eq: 'published' } }
const team = { team: { _eq: 'red' } }

const allow: Decision = { allowed: true, itemFilter: null, fields: null }
const deny: Decision = { allowed: false, itemFilter: null, fields: null }
const allowWith = (itemFilter: FilterNode | null, fields: string[] | null = null): Decision => ({
  allowed: true,
  itemFilter,
  fields,
})

interface Row {
  name: string
  principal: Principal
  role: RoleRules | null
  requested: string
  decision: Decision
}

const check = (rows: Row[]) =>
  it.each(rows)('$name ($requested)', ({ principal, role: r, requested, decision }) => {
    const got = decide(principal, r, parsePermission(requested))
    // The union of allowlists is a set: its order is not part of the contract.
    const sorted = (d: Decision) => ({ ...d, fields: d.fields === null ? null : [...d.fields].sort() })
    expect(sorted(got)).toEqual(sorted(decision))
  })

describe('decide: super_admin', () => {
  check([
    {
      name: 'a collection',
      principal: superAdmin,
      role: superAdminRole,
      requested: 'collections/articles:hard_delete',
      decision: allow,
    },
    { name: 'every resource', principal: superAdmin, role: superAdminRole, requested: '*:manage', decision: allow },
    {
      name: 'the instance',
      principal: superAdmin,
      role: superAdminRole,
      requested: 'instance/projects:create',
      decision: allow,
    },
    {
      name: 'in another project',
      principal: user({ superAdmin: true, projectId: 'p2' }),
      role: null,
      requested: 'system/users:delete',
      decision: allow,
    },
    {
      name: 'even with an empty role',
      principal: superAdmin,
      role: emptyRole,
      requested: 'system/roles:update',
      decision: allow,
    },
  ])
})

describe('decide: a role with admin access', () => {
  check([
    {
      name: 'collections',
      principal: user(),
      role: adminRole,
      requested: 'collections/articles:purge_deleted',
      decision: allow,
    },
    { name: 'users', principal: user(), role: adminRole, requested: 'system/users:delete', decision: allow },
    { name: 'roles', principal: user(), role: adminRole, requested: 'system/roles:update', decision: allow },
    { name: 'settings', principal: user(), role: adminRole, requested: 'system/settings:update', decision: allow },
    { name: 'everything in the project', principal: user(), role: adminRole, requested: '*:manage', decision: allow },
    {
      name: 'not the projects list',
      principal: user(),
      role: adminRole,
      requested: 'instance/projects:read',
      decision: deny,
    },
    {
      name: 'not project creation',
      principal: user(),
      role: adminRole,
      requested: 'instance/projects:create',
      decision: deny,
    },
    {
      name: 'a custom role with admin access is an admin too',
      principal: user(),
      role: role([], true, 'chief'),
      requested: 'system/users:update',
      decision: allow,
    },
    {
      name: 'grants never reach the instance, not even "*"',
      principal: user(),
      role: role([grant('*:manage')]),
      requested: 'instance/projects:read',
      decision: deny,
    },
  ])
})

describe('decide: resources of grants', () => {
  check([
    {
      name: 'exact resource',
      principal: user(),
      role: role([grant('collections/articles:read')]),
      requested: 'collections/articles:read',
      decision: allow,
    },
    {
      name: 'exact resource, another collection',
      principal: user(),
      role: role([grant('collections/articles:read')]),
      requested: 'collections/notes:read',
      decision: deny,
    },
    {
      name: 'exact resource, a longer name',
      principal: user(),
      role: role([grant('collections/articles:read')]),
      requested: 'collections/articles2:read',
      decision: deny,
    },
    {
      name: 'exact resource does not cover the wildcard',
      principal: user(),
      role: role([grant('collections/articles:read')]),
      requested: 'collections/*:read',
      decision: deny,
    },
    {
      name: 'collections/* covers a collection',
      principal: user(),
      role: role([grant('collections/*:read')]),
      requested: 'collections/notes:read',
      decision: allow,
    },
    {
      name: 'collections/* covers itself',
      principal: user(),
      role: role([grant('collections/*:read')]),
      requested: 'collections/*:read',
      decision: allow,
    },
    {
      name: 'collections/* does not cover system',
      principal: user(),
      role: role([grant('collections/*:read')]),
      requested: 'system/files:read',
      decision: deny,
    },
    {
      name: 'collections/* does not cover schema',
      principal: user(),
      role: role([grant('collections/*:read')]),
      requested: 'schema/articles:read',
      decision: deny,
    },
    {
      name: '* covers a collection',
      principal: user(),
      role: role([grant('*:read')]),
      requested: 'collections/notes:read',
      decision: allow,
    },
    {
      name: '* covers system resources',
      principal: user(),
      role: role([grant('*:read')]),
      requested: 'system/users:read',
      decision: allow,
    },
    {
      name: '* still names its action',
      principal: user(),
      role: role([grant('*:read')]),
      requested: 'system/users:update',
      decision: deny,
    },
  ])
})

describe('decide: actions of grants', () => {
  const manage = role([grant('collections/articles:manage')])
  const write = role([grant('collections/articles:write')])
  const read = role([grant('collections/articles:read')])
  check([
    ...[
      'read',
      'create',
      'update',
      'delete',
      'write',
      'execute',
      'transfer',
      'hard_delete',
      'view_deleted',
      'purge_deleted',
      'manage',
    ].map((a) => ({
      name: `manage implies ${a}`,
      principal: user(),
      role: manage,
      requested: `collections/articles:${a}`,
      decision: allow,
    })),
    {
      name: 'write implies create',
      principal: user(),
      role: write,
      requested: 'collections/articles:create',
      decision: allow,
    },
    {
      name: 'write implies update',
      principal: user(),
      role: write,
      requested: 'collections/articles:update',
      decision: allow,
    },
    {
      name: 'write implies delete',
      principal: user(),
      role: write,
      requested: 'collections/articles:delete',
      decision: allow,
    },
    {
      name: 'write does not imply read',
      principal: user(),
      role: write,
      requested: 'collections/articles:read',
      decision: deny,
    },
    {
      name: 'write does not imply transfer',
      principal: user(),
      role: write,
      requested: 'collections/articles:transfer',
      decision: deny,
    },
    {
      name: 'write does not imply hard_delete',
      principal: user(),
      role: write,
      requested: 'collections/articles:hard_delete',
      decision: deny,
    },
    {
      name: 'write does not imply manage',
      principal: user(),
      role: write,
      requested: 'collections/articles:manage',
      decision: deny,
    },
    {
      name: 'read does not imply create',
      principal: user(),
      role: read,
      requested: 'collections/articles:create',
      decision: deny,
    },
    {
      name: 'delete does not imply hard_delete',
      principal: user(),
      role: role([grant('collections/articles:delete')]),
      requested: 'collections/articles:hard_delete',
      decision: deny,
    },
    {
      name: 'create+update+delete held separately do not make manage',
      principal: user(),
      role: editor,
      requested: 'collections/articles:manage',
      decision: deny,
    },
    {
      name: 'no grant at all',
      principal: user(),
      role: emptyRole,
      requested: 'collections/articles:read',
      decision: deny,
    },
    { name: 'no role at all', principal: user(), role: null, requested: 'collections/articles:read', decision: deny },
  ])
})

describe('decide: row filters of matching grants', () => {
  check([
    {
      name: 'one filtered grant gives its filter',
      principal: user(),
      role: role([grant('collections/articles:read', { filter: published })]),
      requested: 'collections/articles:read',
      decision: allowWith(parseFilter(published)),
    },
    {
      name: 'one unrestricted grant lifts the filter',
      principal: user(),
      role: role([grant('collections/articles:read', { filter: published }), grant('collections/*:read')]),
      requested: 'collections/articles:read',
      decision: allow,
    },
    {
      name: 'an unrestricted manage grant lifts a filtered read grant',
      principal: user(),
      role: role([grant('collections/articles:read', { filter: published }), grant('collections/articles:manage')]),
      requested: 'collections/articles:read',
      decision: allow,
    },
    {
      name: 'several filters OR together, in grant order',
      principal: user(),
      role: role([
        grant('collections/articles:read', { filter: published }),
        grant('collections/*:read', { filter: team }),
      ]),
      requested: 'collections/articles:read',
      decision: allowWith(orNode([parseFilter(published), parseFilter(team)])),
    },
    {
      name: 'three filters OR together',
      principal: user(),
      role: role([
        grant('collections/articles:read', { filter: published }),
        grant('collections/*:read', { filter: team }),
        grant('*:manage', { filter: mine }),
      ]),
      requested: 'collections/articles:read',
      decision: allowWith(orNode([parseFilter(published), parseFilter(team), parseFilter(mine)])),
    },
    {
      name: 'a filtered grant of another action does not restrict',
      principal: user(),
      role: role([grant('collections/articles:read'), grant('collections/articles:update', { filter: mine })]),
      requested: 'collections/articles:read',
      decision: allow,
    },
    {
      name: 'a filtered grant of another resource does not widen',
      principal: user(),
      role: role([grant('collections/articles:read', { filter: published }), grant('collections/notes:read')]),
      requested: 'collections/articles:read',
      decision: allowWith(parseFilter(published)),
    },
    {
      name: 'the filter keeps its variables for the caller to resolve',
      principal: user(),
      role: role([grant('collections/articles:update', { filter: mine })]),
      requested: 'collections/articles:update',
      decision: allowWith({
        kind: 'compare',
        field: ['uploadedBy'],
        op: 'eq',
        value: { kind: 'variable', name: '$CURRENT_USER' },
      }),
    },
  ])
})

describe('decide: field allowlists of matching grants', () => {
  check([
    {
      name: 'one allowlist',
      principal: user(),
      role: role([grant('collections/articles:read', { fields: ['title', 'body'] })]),
      requested: 'collections/articles:read',
      decision: allowWith(null, ['title', 'body']),
    },
    {
      name: 'allowlists unite, without duplicates',
      principal: user(),
      role: role([
        grant('collections/articles:read', { fields: ['title', 'body'] }),
        grant('collections/*:read', { fields: ['body', 'tags'] }),
      ]),
      requested: 'collections/articles:read',
      decision: allowWith(null, ['title', 'body', 'tags']),
    },
    {
      name: 'any grant without an allowlist gives every field',
      principal: user(),
      role: role([grant('collections/articles:read', { fields: ['title'] }), grant('collections/*:read')]),
      requested: 'collections/articles:read',
      decision: allow,
    },
    {
      name: 'an allowlist of another action does not restrict',
      principal: user(),
      role: role([grant('collections/articles:read'), grant('collections/articles:update', { fields: ['title'] })]),
      requested: 'collections/articles:read',
      decision: allow,
    },
    {
      name: 'an empty allowlist is kept (no columns)',
      principal: user(),
      role: role([grant('collections/articles:read', { fields: [] })]),
      requested: 'collections/articles:read',
      decision: allowWith(null, []),
    },
    {
      name: 'filters and allowlists combine independently',
      principal: user(),
      role: role([
        grant('collections/articles:read', { filter: published, fields: ['title'] }),
        grant('collections/articles:read', { fields: ['body'] }),
      ]),
      requested: 'collections/articles:read',
      decision: allowWith(null, ['title', 'body']),
    },
  ])
})

describe('decide: the built-in editor and viewer defaults', () => {
  check([
    {
      name: 'editor reads collections',
      principal: user(),
      role: editor,
      requested: 'collections/articles:read',
      decision: allow,
    },
    {
      name: 'editor creates records',
      principal: user(),
      role: editor,
      requested: 'collections/articles:create',
      decision: allow,
    },
    {
      name: 'editor deletes records',
      principal: user(),
      role: editor,
      requested: 'collections/articles:delete',
      decision: allow,
    },
    {
      name: 'editor cannot hard-delete',
      principal: user(),
      role: editor,
      requested: 'collections/articles:hard_delete',
      decision: deny,
    },
    {
      name: 'editor reads every file',
      principal: user(),
      role: editor,
      requested: 'system/files:read',
      decision: allow,
    },
    {
      name: 'editor uploads files',
      principal: user(),
      role: editor,
      requested: 'system/files:create',
      decision: allow,
    },
    {
      name: 'editor updates only own files',
      principal: user(),
      role: editor,
      requested: 'system/files:update',
      decision: allowWith(parseFilter(mine)),
    },
    {
      name: 'editor deletes only own files',
      principal: user(),
      role: editor,
      requested: 'system/files:delete',
      decision: allowWith(parseFilter(mine)),
    },
    {
      name: 'editor runs automations',
      principal: user(),
      role: editor,
      requested: 'system/automate:execute',
      decision: allow,
    },
    {
      name: 'editor cannot change automations',
      principal: user(),
      role: editor,
      requested: 'system/automate:update',
      decision: deny,
    },
    {
      name: 'editor cannot read users',
      principal: user(),
      role: editor,
      requested: 'system/users:read',
      decision: deny,
    },
    {
      name: 'editor cannot change schema',
      principal: user(),
      role: editor,
      requested: 'schema/*:create',
      decision: deny,
    },
    {
      name: 'viewer reads collections',
      principal: user(),
      role: viewer,
      requested: 'collections/articles:read',
      decision: allow,
    },
    { name: 'viewer reads files', principal: user(), role: viewer, requested: 'system/files:read', decision: allow },
    {
      name: 'viewer cannot write',
      principal: user(),
      role: viewer,
      requested: 'collections/articles:create',
      decision: deny,
    },
    { name: 'viewer cannot upload', principal: user(), role: viewer, requested: 'system/files:create', decision: deny },
  ])
})

describe('decide: API keys are bounded by their capabilities', () => {
  check([
    {
      name: 'capability and creator grant both hold',
      principal: apiKey(['collections/articles:read']),
      role: viewer,
      requested: 'collections/articles:read',
      decision: allow,
    },
    {
      name: 'capability missing: denied though the creator holds it',
      principal: apiKey(['collections/articles:read']),
      role: editor,
      requested: 'collections/articles:create',
      decision: deny,
    },
    {
      name: 'capability for another collection: denied',
      principal: apiKey(['collections/articles:read']),
      role: viewer,
      requested: 'collections/notes:read',
      decision: deny,
    },
    {
      name: 'capability held, creator lacks it: denied',
      principal: apiKey(['collections/*:manage']),
      role: viewer,
      requested: 'collections/articles:create',
      decision: deny,
    },
    {
      name: 'wildcard capability, creator grant decides',
      principal: apiKey(['collections/*:write']),
      role: editor,
      requested: 'collections/articles:update',
      decision: allow,
    },
    {
      name: 'write capability does not allow read',
      principal: apiKey(['collections/*:write']),
      role: editor,
      requested: 'collections/articles:read',
      decision: deny,
    },
    {
      name: "the creator's row filter still applies",
      principal: apiKey(['system/files:manage']),
      role: editor,
      requested: 'system/files:delete',
      decision: allowWith(parseFilter(mine)),
    },
    {
      name: 'a super_admin creator: the capability allows',
      principal: apiKey(['system/users:read'], { superAdmin: true }),
      role: superAdminRole,
      requested: 'system/users:read',
      decision: allow,
    },
    {
      name: 'a super_admin creator: capability missing is denied',
      principal: apiKey(['system/users:read'], { superAdmin: true }),
      role: superAdminRole,
      requested: 'system/users:delete',
      decision: deny,
    },
    {
      name: 'a super_admin creator: no capabilities, nothing allowed',
      principal: apiKey([], { superAdmin: true }),
      role: superAdminRole,
      requested: 'collections/articles:read',
      decision: deny,
    },
    {
      name: 'an admin creator: capability allows within the project',
      principal: apiKey(['*:manage']),
      role: adminRole,
      requested: 'system/settings:update',
      decision: allow,
    },
    {
      name: 'an admin creator: the instance stays out of reach',
      principal: apiKey(['*:manage']),
      role: adminRole,
      requested: 'instance/projects:read',
      decision: deny,
    },
    {
      name: 'a creator without a role (gone): denied',
      principal: apiKey(['collections/*:read']),
      role: null,
      requested: 'collections/articles:read',
      decision: deny,
    },
    {
      name: 'capabilities null on a key: denied',
      principal: { ...apiKey([]), capabilities: null },
      role: adminRole,
      requested: 'collections/articles:read',
      decision: deny,
    },
  ])
})

describe('decide: service keys have their capabilities and nothing else', () => {
  check([
    {
      name: 'a capability allows',
      principal: serviceKey(['collections/articles:read']),
      role: null,
      requested: 'collections/articles:read',
      decision: allow,
    },
    {
      name: 'manage capability implies delete',
      principal: serviceKey(['collections/*:manage']),
      role: null,
      requested: 'collections/articles:delete',
      decision: allow,
    },
    {
      name: 'anything else is denied',
      principal: serviceKey(['collections/articles:read']),
      role: null,
      requested: 'collections/articles:update',
      decision: deny,
    },
    {
      name: 'no capabilities, nothing',
      principal: serviceKey([]),
      role: null,
      requested: 'collections/articles:read',
      decision: deny,
    },
    {
      name: 'a role passed in does not narrow it',
      principal: serviceKey(['system/users:read']),
      role: emptyRole,
      requested: 'system/users:read',
      decision: allow,
    },
    {
      name: 'a role passed in does not widen it',
      principal: serviceKey(['collections/articles:read']),
      role: adminRole,
      requested: 'system/users:read',
      decision: deny,
    },
  ])
})

describe('decide: anonymous callers get the public role', () => {
  const open = role(
    [grant('system/users:create'), grant('collections/posts:read', { filter: published, fields: ['title'] })],
    false,
    'public',
  )
  check([
    {
      name: 'public has nothing by default',
      principal: anonymous,
      role: publicRole,
      requested: 'system/users:create',
      decision: deny,
    },
    {
      name: 'public has no collections by default',
      principal: anonymous,
      role: publicRole,
      requested: 'collections/posts:read',
      decision: deny,
    },
    {
      name: 'a public grant opens sign-up',
      principal: anonymous,
      role: open,
      requested: 'system/users:create',
      decision: allow,
    },
    {
      name: 'a public grant keeps its filter and fields',
      principal: anonymous,
      role: open,
      requested: 'collections/posts:read',
      decision: allowWith(parseFilter(published), ['title']),
    },
    {
      name: 'a public grant does not extend to writes',
      principal: anonymous,
      role: open,
      requested: 'collections/posts:create',
      decision: deny,
    },
    {
      name: 'no public role: denied',
      principal: anonymous,
      role: null,
      requested: 'collections/posts:read',
      decision: deny,
    },
  ])
})

describe('decide: the result', () => {
  it('is frozen, so a caller cannot widen a shared decision', () => {
    const results = [
      decide(user(), role([grant('collections/a:read', { filter: published })]), parsePermission('collections/a:read')),
      decide(user(), emptyRole, parsePermission('collections/a:read')),
      decide(superAdmin, superAdminRole, parsePermission('collections/a:read')),
    ]
    for (const result of results) expect(Object.isFrozen(result)).toBe(true)
  })

  it('does not change the role it was given', () => {
    const r = role([
      grant('collections/a:read', { filter: published, fields: ['x'] }),
      grant('collections/*:read', { filter: team, fields: ['y'] }),
    ])
    const before = structuredClone(r)
    decide(user(), r, parsePermission('collections/a:read'))
    expect(r).toEqual(before)
  })
})

describe('fitGrants: grant filters fitted to the resource decided on, then decide', () => {
  // A stand-in for the collection check: `status` and `team` exist, `views` is rewritten, anything else is refused.
  const converted = parseFilter({ views: 10 })
  const fit = (filter: FilterNode): FilterNode => {
    const text = JSON.stringify(filter)
    if (text.includes('"views"')) return converted
    if (text.includes('"status"') || text.includes('"team"')) return filter
    throw new AppError('invalid_request', 'Unknown field "nope"', { field: 'nope' })
  }
  const nope = { nope: { _eq: 1 } }
  const matchesNothing = orNode([])
  const decideFitted = (r: RoleRules, requested: string) =>
    decide(user(), fitGrants(r, parsePermission(requested), fit).role, parsePermission(requested))

  const rows: { name: string; role: RoleRules; requested: string; decision: Decision; unfit: number }[] = [
    {
      name: 'a filter that fits is kept',
      role: role([grant('collections/*:read', { filter: published })]),
      requested: 'collections/a:read',
      decision: allowWith(parseFilter(published)),
      unfit: 0,
    },
    {
      name: "a converted filter replaces the grant's",
      role: role([grant('collections/*:read', { filter: { views: '10' } })]),
      requested: 'collections/a:read',
      decision: allowWith(converted),
      unfit: 0,
    },
    {
      name: 'a grant that does not fit reaches nothing',
      role: role([grant('collections/*:read', { filter: nope })]),
      requested: 'collections/a:read',
      decision: allowWith(matchesNothing, []),
      unfit: 1,
    },
    {
      name: 'ORed with a fitting grant, it adds nothing',
      role: role([grant('collections/*:read', { filter: nope }), grant('collections/a:read', { filter: team })]),
      requested: 'collections/a:read',
      decision: allowWith(orNode([matchesNothing, parseFilter(team)])),
      unfit: 1,
    },
    {
      name: 'an unrestricted grant beside it still lifts the restriction',
      role: role([grant('collections/*:read', { filter: nope }), grant('collections/a:read')]),
      requested: 'collections/a:read',
      decision: allow,
      unfit: 1,
    },
    {
      name: 'it opens none of its columns to the rows of the others',
      role: role([grant('collections/*:read', { filter: nope }), grant('collections/a:read', { fields: ['title'] })]),
      requested: 'collections/a:read',
      decision: allowWith(null, ['title']),
      unfit: 1,
    },
    {
      name: 'grants not covering the request are left alone',
      role: role([
        grant('collections/b:read', { filter: nope }),
        grant('collections/a:update', { filter: nope }),
        grant('collections/a:read', { filter: published }),
      ]),
      requested: 'collections/a:read',
      decision: allowWith(parseFilter(published)),
      unfit: 0,
    },
    {
      name: 'admin access: nothing to fit',
      role: adminRole,
      requested: 'collections/a:read',
      decision: allow,
      unfit: 0,
    },
  ]
  it.each(rows)('$name', ({ role: r, requested, decision, unfit }) => {
    const got = decideFitted(r, requested)
    const sorted = (d: Decision) => ({ ...d, fields: d.fields === null ? null : [...d.fields].sort() })
    expect(sorted(got)).toEqual(sorted(decision))
    expect(fitGrants(r, parsePermission(requested), fit).unfit).toHaveLength(unfit)
  })

  it('reports why a grant does not fit, and returns the role itself when nothing changed', () => {
    const broken = grant('collections/*:read', { filter: nope })
    const { unfit } = fitGrants(role([broken]), parsePermission('collections/a:read'), fit)
    expect(unfit).toEqual([{ grant: broken, reason: 'Unknown field "nope"' }])
    const fine = role([grant('collections/*:read', { filter: published })])
    expect(fitGrants(fine, parsePermission('collections/a:read'), fit).role).toBe(fine)
  })

  it('lets an error that is not a refusal through', () => {
    const failing = () => {
      throw new Error('boom')
    }
    expect(() =>
      fitGrants(
        role([grant('collections/*:read', { filter: published })]),
        parsePermission('collections/a:read'),
        failing,
      ),
    ).toThrow('boom')
    const internal = () => {
      throw new AppError('internal', 'broken resolver')
    }
    expect(() =>
      fitGrants(
        role([grant('collections/*:read', { filter: published })]),
        parsePermission('collections/a:read'),
        internal,
      ),
    ).toThrow('broken resolver')
  })
})

describe('reachesAny', () => {
  const rows: { name: string; principal: Principal; role: RoleRules | null; requested: string; reaches: boolean }[] = [
    {
      name: 'anonymous, public holds nothing',
      principal: anonymous,
      role: emptyRole,
      requested: 'collections/*:read',
      reaches: false,
    },
    {
      name: 'anonymous, public reads one collection',
      principal: anonymous,
      role: role([grant('collections/posts:read')]),
      requested: 'collections/*:read',
      reaches: true,
    },
    {
      name: 'anonymous, public reads every collection',
      principal: anonymous,
      role: role([grant('collections/*:read')]),
      requested: 'collections/*:read',
      reaches: true,
    },
    {
      name: 'a row filter does not matter',
      principal: anonymous,
      role: role([grant('collections/posts:read', { filter: { status: 'published' } })]),
      requested: 'collections/*:read',
      reaches: true,
    },
    {
      name: 'manage implies read',
      principal: anonymous,
      role: role([grant('collections/posts:manage')]),
      requested: 'collections/*:read',
      reaches: true,
    },
    {
      name: 'another action does not',
      principal: anonymous,
      role: role([grant('collections/posts:create')]),
      requested: 'collections/*:read',
      reaches: false,
    },
    {
      name: 'another resource does not',
      principal: anonymous,
      role: role([grant('system/users:create')]),
      requested: 'collections/*:read',
      reaches: false,
    },
    {
      name: 'a single resource asked: as decide',
      principal: user(),
      role: role([grant('collections/posts:read')]),
      requested: 'collections/notes:read',
      reaches: false,
    },
    {
      name: 'everything (*) reaches',
      principal: user(),
      role: role([grant('*:read')]),
      requested: 'collections/*:read',
      reaches: true,
    },
    { name: 'admin access', principal: user(), role: adminRole, requested: 'collections/*:read', reaches: true },
    {
      name: 'admin access never reaches instance resources',
      principal: user(),
      role: adminRole,
      requested: 'instance/*:read',
      reaches: false,
    },
    { name: 'super_admin', principal: superAdmin, role: superAdminRole, requested: 'instance/*:read', reaches: true },
    { name: 'no role', principal: user(), role: null, requested: 'collections/*:read', reaches: false },
    {
      name: 'a key needs a capability below the wildcard',
      principal: apiKey(['system/files:read']),
      role: builtIn('editor'),
      requested: 'collections/*:read',
      reaches: false,
    },
    {
      name: 'a key with one collection and a role that reads all',
      principal: apiKey(['collections/posts:read']),
      role: builtIn('viewer'),
      requested: 'collections/*:read',
      reaches: true,
    },
    {
      name: 'a service key with a capability below',
      principal: serviceKey(['collections/posts:read']),
      role: null,
      requested: 'collections/*:read',
      reaches: true,
    },
  ]
  it.each(rows)('$name', ({ principal, role: r, requested, reaches }) => {
    expect(reachesAny(principal, r, parsePermission(requested))).toBe(reaches)
  })
})

describe('decide: system work (maintenance Plinth starts itself)', () => {
  check([
    {
      name: 'anything in its project, with no role',
      principal: system,
      role: null,
      requested: 'collections/articles:hard_delete',
      decision: allow,
    },
    { name: 'system resources', principal: system, role: null, requested: 'system/users:update', decision: allow },
    { name: 'not the instance', principal: system, role: null, requested: 'instance/projects:create', decision: deny },
    {
      name: 'not another project',
      principal: { ...system, projectId: 'p2' },
      role: null,
      requested: 'collections/articles:read',
      decision: deny,
    },
  ])
  it('reaches every collection of its project, and nothing of the instance', () => {
    expect(reachesAny(system, null, parsePermission('collections/*:read'))).toBe(true)
    expect(reachesAny(system, null, parsePermission('instance/projects:read'))).toBe(false)
  })
})
