import { AppError, isAppError } from '../../lib/errors.js'
import { checkFilter, type FieldResolver, type FilterNode } from '../../lib/filter/index.js'
import { principals, type Principal } from '../../lib/principal.js'
import { withinCapabilities, type AccessService, type GrantFilterCheck } from '../access/index.js'
import type { Collection, CollectionsService } from '../collections/index.js'
import { fieldResolver, shapeOf } from './codec.js'
import { withFieldValues } from './filter-values.js'
import { intersectScopes, recordScope, shareCovers, type RecordScope, type ShareAccess } from './scope.js'
import type { SharesStore } from './shares-store.js'

const shareLevels: readonly ShareAccess[] = ['view', 'comment', 'edit']

/** What checking one grant filter against one collection gave: the checked filter, or the refusal. */
type Fitted = { readonly filter: FilterNode } | { readonly refusal: unknown }

/**
 * The resolver a grant's row filter is checked with: every field of the collection, whatever the caller may
 * read, with the values each takes. Grant filters compare translatable fields in the request's locale; the
 * locale (and the dialect) play no part in whether a field resolves.
 */
function grantResolver(collection: Collection): FieldResolver {
  return withFieldValues(fieldResolver(shapeOf(collection, 'sqlite'), 'en'), collection.fields)
}

/** The collection a grant's resource names, when it names exactly one (`collections/posts`); else null. */
function namedCollection(resource: string): string | null {
  const name = resource.startsWith('collections/') ? resource.slice('collections/'.length) : ''
  return name === '' || name.includes('*') ? null : name
}

/** The record scope of a caller for one action on one collection: grants, preset, and shares together. */
export function createRecordAccess(deps: { access: AccessService; shares: SharesStore }) {
  // A collection is a new object after every schema change and a grant's filter a new one after every
  // grant change, so a check, once made, holds for as long as both objects live.
  const checked = new WeakMap<Collection, { resolver: FieldResolver; fitted: WeakMap<FilterNode, Fitted> }>()

  /** A grant's row filter checked against the collection (and converted); throws its 4xx refusal when it cannot apply. */
  function fitTo(collection: Collection): (filter: FilterNode) => FilterNode {
    let entry = checked.get(collection)
    if (!entry) checked.set(collection, (entry = { resolver: grantResolver(collection), fitted: new WeakMap() }))
    const { resolver, fitted } = entry
    return (filter) => {
      let result = fitted.get(filter)
      if (!result) {
        try {
          result = { filter: checkFilter(filter, resolver) }
        } catch (err) {
          if (!isAppError(err) || err.status >= 500) throw err
          result = { refusal: err }
        }
        fitted.set(filter, result)
      }
      if ('refusal' in result) throw result.refusal
      return result.filter
    }
  }

  /**
   * Whether an anonymous caller reaches anything of a collection for an action: a grant of `public`
   * covering it, or, to read, the collection's `public` preset (`collection` null: no such collection).
   * Anyone else: true, their scope decides. Without it, an anonymous request is 401 (decision 012).
   */
  async function anonymousMay(
    principal: Principal,
    collection: Collection | null,
    name: string,
    action: string,
  ): Promise<boolean> {
    if (principal.kind !== 'anonymous') return true
    if (action === 'read' && collection?.accessControl?.preset === 'public') return true
    return (await deps.access.decide(principal, `collections/${name}`, action)).allowed
  }

  /** The record scope of the principal's own rights: grants, preset, and shares together. */
  async function ownScope(
    principal: Principal,
    collection: Collection,
    action: string,
  ): Promise<RecordScope & { admin: boolean }> {
    // A grant filter that cannot apply to this collection (a wildcard grant naming a field it lacks) matches
    // none of its records: the access service logs it and leaves the grant's rows and columns out.
    const decision = await deps.access.decide(principal, `collections/${collection.name}`, action, {
      fitRowFilter: fitTo(collection),
    })
    const admin = await deps.access.hasAdminAccess(principal)
    const preset = collection.accessControl?.preset ?? 'team'
    const sharing = collection.accessControl?.sharing === true
    const levels = shareLevels.filter((level) => shareCovers(level, action))
    // A share opens a record to its person; a key of that person only within the key's capabilities.
    const sharedIds =
      sharing &&
      levels.length > 0 &&
      principal.userId &&
      principal.kind !== 'anonymous' &&
      withinCapabilities(principal, { resource: `collections/${collection.name}`, action })
        ? await deps.shares.recordIdsFor(collection.id, principal.userId, levels)
        : []
    // A service key (no user) acts for the system: owner scoping has no owner to narrow to.
    const unnarrowed = admin || (principal.kind === 'api_key' && principal.userId === null)
    return { ...recordScope({ principal, action, decision, preset, sharing, admin: unnarrowed, sharedIds }), admin }
  }

  /**
   * The record scope of a caller for one action on one collection; a capped caller (a flow run under its
   * publisher, decision 045) gets what it and its ceiling both reach: each layer's grants, preset and shares
   * (its own rows, its own shares) apply to it, and the scopes intersect.
   */
  async function scope(
    principal: Principal,
    collection: Collection,
    action: string,
  ): Promise<RecordScope & { admin: boolean }> {
    if (principal.ceiling === null) return ownScope(principal, collection, action)
    const own = await ownScope(principals.uncapped(principal), collection, action)
    const below = await scope(principal.ceiling, collection, action)
    return { ...intersectScopes(own, below), admin: own.admin && below.admin }
  }

  return {
    scope,

    /**
     * The check the access service runs when grants are saved (bound once collections exist): a row filter
     * of a grant naming one existing collection must resolve against its schema, or it is refused with what
     * is wrong (invalid_request, naming the field). Wildcard grants and collections not created yet are
     * checked when a request applies them.
     */
    grantFilterCheck(collections: Pick<CollectionsService, 'find'>): GrantFilterCheck {
      return async (projectId, resource, filter) => {
        const name = namedCollection(resource)
        const collection = name === null ? null : await collections.find(projectId, name)
        if (collection) checkFilter(filter, grantResolver(collection))
      }
    },

    /**
     * The check of routes whose service decides who may do what (collections, records, shares, field
     * options): anyone with a credential passes to the service; an anonymous caller only where something
     * could be open to it (`anonymousMay`, or schema read, which shows a collection's definition), so that it
     * is 401 before its input is even validated. The services refuse the same callers on their own.
     */
    anonymousGate(
      collections: Pick<CollectionsService, 'find'>,
    ): (principal: Principal, permission: string) => Promise<void> {
      return async (principal, permission) => {
        if (principal.kind !== 'anonymous') return
        const at = permission.lastIndexOf(':')
        const resource = permission.slice(0, at)
        const action = permission.slice(at + 1)
        const name = resource.startsWith('collections/') ? resource.slice('collections/'.length) : '*'
        // A wildcard (the list of collections) is left to the service: what is visible decides.
        if (name === '*') return
        if (await anonymousMay(principal, await collections.find(principal.projectId, name), name, action)) return
        if (action === 'read' && (await deps.access.decide(principal, 'schema/*', 'read')).allowed) return
        throw new AppError('unauthorized', 'Sign in to do this')
      }
    },

    /** Throws unauthorized (anonymous) or forbidden (naming the permission) for a refused scope on the named collection. */
    refuse(principal: Principal, name: string, action: string): never {
      if (principal.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to do this')
      throw new AppError('forbidden', `Missing permission collections/${name}:${action}`, {
        resource: `collections/${name}`,
        action,
      })
    },

    anonymousMay,
  }
}

export type RecordAccess = ReturnType<typeof createRecordAccess>
