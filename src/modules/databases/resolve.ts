import { createSecretBox, type SecretBox } from '../../lib/crypto/index.js'
import { MAIN_BINDING, type DbHandle, type ResolveBinding } from '../../lib/db/index.js'
import { createDatabasesStore } from './store.js'

/** The box binding URLs are sealed in; the registry's lookup and the service open the same seals. */
export function bindingsBox(secretKey: string): SecretBox {
  return createSecretBox(secretKey, 'database-bindings')
}

/**
 * The registry's lookup of registered bindings. It needs only the system database and the box, so it is
 * built with the registry, before the modules (the databases service among them) that need the registry.
 */
export function createBindingResolver(deps: {
  box: SecretBox
  allowPrivateNetwork: boolean
}): (system: DbHandle) => ResolveBinding {
  return (system) => {
    const store = createDatabasesStore(system.db)
    return async (projectId, id) => {
      if (id === MAIN_BINDING) return null
      const row = await store.byId(id)
      if (!row || row.project_id !== projectId) return null
      if (row.kind === 'sqlite') return { id: row.id, kind: 'sqlite' }
      return {
        id: row.id,
        kind: 'postgres',
        url: deps.box.open(row.url_sealed ?? ''),
        privateNetwork: Boolean(row.private_network) || deps.allowPrivateNetwork,
      }
    }
  }
}
