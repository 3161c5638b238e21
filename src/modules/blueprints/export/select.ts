import { AppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import type { BrickKindName } from '../kinds/index.js'
import type { BrickProvider, LiveResource } from '../providers/index.js'
import type { Namespacer } from './namespace.js'
import { listedKinds, type ExportRequest, type ListParam } from './request.js'
import { seedShape } from './seed.js'

/** One live resource an export holds, as the caller read it. */
export interface ExportItem {
  kind: BrickKindName
  /** Its id or name, as its routes take it. */
  ref: string
  /** Its create shape (the kind's reader). */
  shape: Record<string, unknown>
  /** What its brick id is made from: its name, label, or what it belongs to. */
  label: string
}

export type Providers = ReadonlyMap<string, BrickProvider>

/** Every kind's naming member: what `*` and a name in the query match. */
const nameOf = (kind: string, shape: Record<string, unknown>) => String(shape[kind === 'nav' ? 'label' : 'name'] ?? '')

function provider(providers: Providers, kind: string): BrickProvider & Required<Pick<BrickProvider, 'list'>> {
  const p = providers.get(kind)
  if (!p?.list) throw new AppError('internal', `No reader lists ${kind} resources`)
  return p as BrickProvider & Required<Pick<BrickProvider, 'list'>>
}

/**
 * The resources a request names, and the bricks derived from them (access, grants, attachments, nav items,
 * seed records), each read through its kind's provider as the caller: a kind the caller may not list
 * throws its route's forbidden; a name the caller cannot see is not found, whether it exists or not.
 */
export async function selectResources(
  providers: Providers,
  actor: Principal,
  request: ExportRequest,
  ns: Namespacer,
): Promise<ExportItem[]> {
  const items: ExportItem[] = []
  for (const param of Object.keys(listedKinds) as ListParam[]) {
    const names = request.select[param]
    if (!names) continue
    const kind = listedKinds[param]
    const live = await provider(providers, kind).list(actor)
    for (const resource of pick(kind, live, names, ns))
      items.push({ kind, ref: resource.ref, shape: resource.shape, label: nameOf(kind, resource.shape) })
  }
  const of = (kind: BrickKindName) => items.filter((i) => i.kind === kind)

  if (request.access)
    for (const collection of of('collection')) {
      const live = await providers.get('access')!.read(actor, collection.ref)
      if (live) items.push({ kind: 'access', ref: live.ref, shape: live.shape, label: collection.label })
    }
  if (request.grants)
    for (const role of of('role')) {
      const live = await providers.get('grants')!.read(actor, role.ref)
      if (live) items.push({ kind: 'grants', ref: live.ref, shape: live.shape, label: role.label })
    }
  const lenses = new Map(of('lens').map((lens) => [lens.ref, lens.label]))
  if (request.attachments && lenses.size > 0)
    for (const attachment of await provider(providers, 'attachment').list(actor)) {
      const lens = lenses.get(String(attachment.shape.lensId))
      if (lens === undefined) continue
      const label = `${lens}-${String(attachment.shape.placement)}-${String(attachment.shape.collection)}`
      items.push({ kind: 'attachment', ref: attachment.ref, shape: attachment.shape, label })
    }
  if (request.nav) items.push(...(await navItems(providers, actor, items)))
  for (const seed of request.records) {
    const collection = await providers.get('collection')!.read(actor, seed.collection)
    if (!collection)
      throw new AppError('collection_not_found', `No collection named ${seed.collection} that you can read`, {
        collection: seed.collection,
      })
    const records = await provider(providers, 'records').list(actor, collection.ref)
    const shape = seedShape(collection, records, seed.key)
    if (shape) items.push({ kind: 'records', ref: collection.ref, shape, label: collection.ref })
  }
  return items
}

/**
 * The resources of one kind a list of names picks: `*` those whose name holds the namespace; any other
 * entry the one of that name, else of that id. Throws not_found (collection_not_found for a collection)
 * naming the entry, or invalid_request when a name is shared by several (give the id).
 */
function pick(kind: string, live: readonly LiveResource[], names: readonly string[], ns: Namespacer): LiveResource[] {
  const out = new Map<string, LiveResource>()
  for (const name of names) {
    if (name === '*') {
      for (const resource of live) if (ns.holds(nameOf(kind, resource.shape))) out.set(resource.ref, resource)
      continue
    }
    let found = live.filter((r) => nameOf(kind, r.shape) === name)
    if (found.length === 0) found = live.filter((r) => r.ref === name)
    if (found.length === 0)
      throw new AppError(
        kind === 'collection' ? 'collection_not_found' : 'not_found',
        `No ${kind} named ${name} that you can read`,
        { kind, name },
      )
    if (found.length > 1)
      throw new AppError('invalid_request', `${found.length} ${kind} resources are named ${name}: give its id`, {
        kind,
        name,
        ids: found.map((r) => r.ref),
      })
    out.set(found[0]!.ref, found[0]!)
  }
  return [...out.values()]
}

/** The top-level items of the shared tree opening an exported collection, view, lens or flow. */
async function navItems(providers: Providers, actor: Principal, items: readonly ExportItem[]): Promise<ExportItem[]> {
  const opened = new Set<string>()
  for (const item of items) {
    if (item.kind === 'collection') opened.add(`collection ${item.ref}`)
    if (item.kind === 'view' || item.kind === 'lens' || item.kind === 'flow') opened.add(`${item.kind} ${item.ref}`)
  }
  const out: ExportItem[] = []
  for (const item of await provider(providers, 'nav').list(actor)) {
    const target = item.shape.target as { kind: string; ref: string }
    if (item.shape.parentId !== undefined && item.shape.parentId !== null) continue
    if (!opened.has(`${target.kind} ${target.ref}`)) continue
    out.push({ kind: 'nav', ref: item.ref, shape: item.shape, label: String(item.shape.label) })
  }
  return out
}
