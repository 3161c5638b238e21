import type { z } from 'zod'
import { isAppError } from '../../../lib/errors.js'
import { rejectInvalid } from '../../../lib/http/index.js'
import type { Principal } from '../../../lib/principal.js'

/** One call a plan proposes: the route a client would call to apply it (secrets as placeholders). */
export interface ProposedCall {
  method: 'POST' | 'PATCH' | 'PUT' | 'DELETE'
  path: string
  body: unknown
}

/** Why a plan blocks a brick (the spec's BLOCKED reasons), or a warning it carries. */
export interface Finding {
  code: string
  message: string
}

/** A resource as a plan sees it: its reference (the id or name its routes take) and its create shape. */
export interface LiveResource {
  ref: string
  shape: Record<string, unknown>
  /** For a resource that is a set (seed records): each member's natural key (JSON text) → its id. */
  members?: Record<string, string>
}

/**
 * What the blueprint module knows of one brick kind (issue 30 item 3): the resource's create shape from a
 * brick body, the live resources a body names, and the writes, each through the same service method its
 * route calls, as the installing person, so the route's permission rules apply. Registered per kind.
 */
export interface BrickProvider {
  readonly kind: string
  /** Create-shape paths a plan does not compare (the spec's per-kind limits). */
  readonly notCompared: readonly string[]
  /** Top-level keys no update changes: a live resource differing there cannot be brought to the brick. */
  readonly immutable: readonly string[]
  /** The create shape as a plan compares and hashes it (a secret as whether one is held, a list sorted…). */
  comparable(shape: Record<string, unknown>): Record<string, unknown>
  /** The calls that bring `live` (null: absent) to `desired`, as a client would make them. */
  calls(desired: Record<string, unknown>, live: LiveResource | null): ProposedCall[]
  /** A reason to block the brick that needs a read (a lens that is not there…), as the caller; null when none. */
  check?(actor: Principal, desired: Record<string, unknown>): Promise<Finding | null>
  /** What the plan should tell about this brick (limits not compared…). */
  warnings?(
    actor: Principal,
    desired: Record<string, unknown>,
    live: LiveResource | null,
  ): Finding[] | Promise<Finding[]>
  /** The body as its create route takes it, defaults filled, in create shape. Throws invalid_request (the route's 400). */
  desired(body: unknown): Record<string, unknown>
  /** The live resources `desired` names by its natural key (name, label…), read as the caller: several means ambiguous. */
  find(actor: Principal, desired: Record<string, unknown>): Promise<LiveResource[]>
  /**
   * One resource by its ref, read as the caller; null when it is gone. `known` is its last known shape (the
   * ledger's baseline): a kind whose resource is a set (seed records) reads the members it names.
   */
  read(actor: Principal, ref: string, known?: Record<string, unknown>): Promise<LiveResource | null>
  /**
   * Every resource of the kind the caller sees, read as the caller (an export's input, issue 30 item 7);
   * throws as the kind's list route does (forbidden). A kind whose resources live in one collection (seed
   * records) lists those of `within`.
   */
  list?(actor: Principal, within?: string): Promise<LiveResource[]>
  create(actor: Principal, desired: Record<string, unknown>): Promise<LiveResource>
  /** Absent when the kind has no update path (a plan blocks such a change). */
  update?(actor: Principal, ref: string, desired: Record<string, unknown>): Promise<LiveResource>
  remove(actor: Principal, ref: string, known?: Record<string, unknown>): Promise<void>
  /** The calls that remove `live` as a client would make them (an uninstall's preview). */
  removeCalls(live: LiveResource): ProposedCall[]
}

/** A resource kind with the usual service (get, create, update, delete by id, a paged list), described once. */
export interface ResourceSpec<T, C, U> {
  kind: string
  /** The create route's path (`/api/v1/views`); its item route is this + `/{ref}`, changed by PATCH. */
  route: string
  immutable?: readonly string[]
  check?: BrickProvider['check']
  warnings?: BrickProvider['warnings']
  createSchema: z.ZodType<C>
  updateSchema?: z.ZodType<U>
  /** The desired create shape of a body, where the create schema alone does not make it (default: parse, then `shape`). */
  desiredOf?(body: unknown): Record<string, unknown>
  /** The live resource → its create shape (the module's reader). */
  shape(value: T): Record<string, unknown>
  /** The create-shape keys that name the resource (a natural key): equal values, same resource. */
  key: readonly string[]
  idOf(value: T): string
  /** Every resource of the kind the caller sees. */
  all(actor: Principal): Promise<T[]>
  get(actor: Principal, ref: string): Promise<T>
  create(actor: Principal, input: C): Promise<T>
  update?(actor: Principal, ref: string, input: U): Promise<T>
  remove(actor: Principal, ref: string): Promise<void>
  /** The update body from a desired shape (default: the shape itself); drops what cannot change. */
  updateBody?(desired: Record<string, unknown>): Record<string, unknown>
  notCompared?: readonly string[]
  comparable?(shape: Record<string, unknown>): Record<string, unknown>
}

export function resourceProvider<T, C, U>(spec: ResourceSpec<T, C, U>): BrickProvider {
  const parse = parseBody
  const live = (value: T): LiveResource => ({ ref: spec.idOf(value), shape: spec.shape(value) })
  const keyOf = (shape: Record<string, unknown>) => JSON.stringify(spec.key.map((k) => shape[k] ?? null))
  const update = spec.update
  const updateSchema = spec.updateSchema
  return {
    kind: spec.kind,
    notCompared: spec.notCompared ?? [],
    immutable: spec.immutable ?? [],
    comparable: spec.comparable ?? ((shape) => shape),
    calls: (desired, found) =>
      found === null
        ? [{ method: 'POST', path: spec.route, body: desired }]
        : [
            {
              method: 'PATCH',
              path: `${spec.route}/${encodeURIComponent(found.ref)}`,
              body: (spec.updateBody ?? ((d) => d))(desired),
            },
          ],
    check: spec.check,
    warnings: spec.warnings,
    desired: (body) =>
      spec.desiredOf ? spec.desiredOf(body) : spec.shape(parse(spec.createSchema, body) as unknown as T),
    async find(actor, desired) {
      const key = keyOf(desired)
      return (await spec.all(actor)).map(live).filter((resource) => keyOf(resource.shape) === key)
    },
    list: async (actor) => (await spec.all(actor)).map(live),
    async read(actor, ref) {
      try {
        return live(await spec.get(actor, ref))
      } catch (err) {
        if (isAppError(err) && (err.code === 'not_found' || err.code === 'collection_not_found')) return null
        throw err
      }
    },
    create: async (actor, desired) => live(await spec.create(actor, parse(spec.createSchema, desired))),
    update:
      update && updateSchema
        ? async (actor, ref, desired) =>
            live(await update(actor, ref, parse(updateSchema, (spec.updateBody ?? ((d) => d))(desired))))
        : undefined,
    remove: (actor, ref) => spec.remove(actor, ref),
    removeCalls: (found) => [{ method: 'DELETE', path: `${spec.route}/${encodeURIComponent(found.ref)}`, body: null }],
  }
}

/** A body parsed by its route's schema, or the route's own 400 invalid_request naming each bad path. */
export function parseBody<V>(schema: z.ZodType<V>, body: unknown): V {
  const result = schema.safeParse(body)
  if (!result.success) rejectInvalid({ success: false, target: 'json', error: result.error })
  return (result as { data: V }).data
}

/** Every item of a paged list, page by page (lists cap their page size). */
export async function allPages<T>(
  list: (page: number, limit: number) => Promise<{ data: T[]; total: number }>,
  limit = 100,
): Promise<T[]> {
  const out: T[] = []
  for (let page = 1; ; page++) {
    const { data, total } = await list(page, limit)
    out.push(...data)
    if (data.length < limit || out.length >= total) return out
  }
}
