import { filterNamesField, renameFilterField } from '../../lib/filter/rename-field.js'
import type { AccessStore, GrantRow } from './store.js'

/** A grant naming a collection's field, as the collections module lists references (decision 062). */
export interface GrantFieldReference {
  readonly kind: 'grant'
  readonly id: string
  readonly name: string
  readonly updatable: boolean
}

interface Query {
  readonly projectId: string
  readonly collection: string
  readonly field: string
  readonly purpose: 'drop' | 'rename'
}

const wildcard = (resource: string) => resource === '*' || resource === 'collections/*'

/** Where a grant names the field: its field list, its row filter, or both; empty when it does not. */
function where(grant: GrantRow, field: string): string[] {
  const fields = grant.fields === null ? [] : (JSON.parse(grant.fields) as string[])
  const filter = grant.item_filter === null ? null : (JSON.parse(grant.item_filter) as unknown)
  return [
    ...(fields.includes(field) ? ['fields'] : []),
    ...(filter !== null && filterNamesField(filter, field) ? ['item_filter'] : []),
  ]
}

/**
 * Grants and renamed fields. A grant on the collection itself (`collections/<name>`) names its fields, so a
 * rename rewrites its `fields` and `item_filter` and a drop is refused while it names the field. A grant on
 * every collection (`*`, `collections/*`) names a field of whichever collection has it: a drop leaves it
 * meaning the same for the others, and a rename reports it (the role no longer reaches the renamed column
 * through it) without rewriting it for the others.
 */
export function createGrantFieldReferences(deps: {
  store: AccessStore
  invalidate: (projectId: string) => Promise<void>
}) {
  const { store } = deps
  async function grantsNaming(query: Omit<Query, 'purpose'>) {
    const roles = await store.rolesOf(query.projectId)
    const names = new Map(roles.map((r) => [r.id, r.name]))
    const grants = await store.grantsOf(roles.map((r) => r.id))
    return grants.flatMap((grant) => {
      const own = grant.resource === `collections/${query.collection}`
      if (!own && !wildcard(grant.resource)) return []
      const at = where(grant, query.field)
      return at.length === 0 ? [] : [{ grant, own, role: names.get(grant.role_id) ?? grant.role_id, at }]
    })
  }
  return {
    async find(query: Query, found: { push(reference: GrantFieldReference): unknown }): Promise<void> {
      for (const { grant, own, role, at } of await grantsNaming(query)) {
        if (!own && query.purpose === 'drop') continue
        found.push({
          kind: 'grant',
          id: grant.id,
          name: `role ${role}: ${grant.action} on ${grant.resource} (${at.join(', ')})`,
          updatable: own,
        })
      }
    },
    async rename(query: Omit<Query, 'purpose'>, to: string): Promise<void> {
      let changed = false
      for (const { grant, own } of await grantsNaming(query)) {
        if (!own) continue
        const fields = grant.fields === null ? null : (JSON.parse(grant.fields) as string[])
        const filter = grant.item_filter === null ? null : (JSON.parse(grant.item_filter) as unknown)
        await store.updateGrantRules(grant.id, {
          fields: fields === null ? null : JSON.stringify(fields.map((f) => (f === query.field ? to : f))),
          item_filter: filter === null ? null : JSON.stringify(renameFilterField(filter, query.field, to)),
        })
        changed = true
      }
      if (changed) await deps.invalidate(query.projectId)
    },
  }
}
