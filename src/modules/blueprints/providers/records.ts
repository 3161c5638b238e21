import { z } from 'zod'
import { AppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import type { AccessService } from '../../access/index.js'
import type { CollectionsService } from '../../collections/index.js'
import { recordCreateShape, type RecordsService } from '../../records/index.js'
import { defaultKeyColumns, maxSeedRows } from '../kinds/records.js'
import { parseBody, type BrickProvider, type Finding, type LiveResource, type ProposedCall } from './provider.js'

export interface RecordServices {
  records: Pick<RecordsService, 'find' | 'create' | 'update' | 'delete'>
  /** The installer's read scope on the seed's collection (its columns and rows), as records reads apply it. */
  access: Pick<AccessService, 'decide' | 'hasAdminAccess'>
  collections: Pick<CollectionsService, 'find'>
}

const RecordsBrickSchema = z.strictObject({
  collection: z.string().min(1).max(100),
  key: z.string().min(1).max(100).optional(),
  rows: z.array(z.record(z.string(), z.unknown())).max(maxSeedRows),
})

type Row = Record<string, unknown>
interface Seed {
  collection: string
  key: string
  rows: Row[]
}

function parseSeed(body: unknown): Seed {
  const { collection, key, rows } = parseBody(RecordsBrickSchema, body)
  const column = key ?? defaultKeyColumns.find((c) => rows[0] && Object.hasOwn(rows[0], c))
  if (column === undefined || rows.some((row) => row[column] === undefined || row[column] === null))
    throw new AppError('invalid_request', 'Every seed row is found again by its natural key: name it with key', {
      property: 'key',
    })
  return { collection, key: column, rows }
}

/** The ref of a seed: its collection and natural-key column. */
const refOf = (seed: Pick<Seed, 'collection' | 'key'>) => `${seed.collection}/${seed.key}`
const keyText = (value: unknown) => JSON.stringify(value)

/**
 * records bricks: a seed is a set of rows of one collection, each found again by its natural key (the
 * brick's `key`, else slug, name or title). Read back, each row shows the columns the brick gives; a row
 * missing is missing from the read; a key held by two records makes the seed ambiguous (find answers one
 * resource per record holding it). Writes are upserts by key, so applying a seed twice writes nothing new.
 */
export function recordsProvider(s: RecordServices): BrickProvider {
  /** The installer's read of the seed's collection: the grant's decision, and whether rows are scoped. */
  async function readScope(actor: Principal, seed: Seed) {
    const decision = await s.access.decide(actor, `collections/${seed.collection}`, 'read')
    // Not readable at all: the read itself refuses (read.permission_missing), or the public preset opens it.
    if (!decision.allowed) return null
    const live = await s.collections.find(actor.projectId, seed.collection)
    const privateRows = live?.accessControl?.preset === 'private' && !(await s.access.hasAdminAccess(actor))
    return { fields: decision.fields, filtered: decision.itemFilter !== null, privateRows }
  }

  /**
   * spec: read.field_scope_narrowed. The grant's field allowlist must hold every column the seed writes,
   * else its rows could never be read back as written.
   */
  async function scopeCheck(actor: Principal, desired: Record<string, unknown>): Promise<Finding | null> {
    const seed = parseSeed(desired)
    const scope = await readScope(actor, seed)
    const columns = [...new Set(seed.rows.flatMap((row) => Object.keys(row)))]
    const hidden = scope?.fields ? columns.filter((c) => !scope.fields!.includes(c)) : []
    return hidden.length === 0
      ? null
      : {
          code: 'read.field_scope_narrowed',
          message: `You may read only some columns of ${seed.collection}: ${hidden.join(', ')} could not be read back`,
        }
  }

  /**
   * spec: read.item_filter_not_applicable. A row scope (the grant's item filter, or the private preset for
   * one without admin access) hides rows outside it, so a key held there is not seen.
   */
  async function scopeWarnings(actor: Principal, desired: Record<string, unknown>): Promise<Finding[]> {
    const seed = parseSeed(desired)
    const scope = await readScope(actor, seed)
    if (!scope || !(scope.filtered || scope.privateRows)) return []
    return [
      {
        code: 'read.item_filter_not_applicable',
        message: `You read only some records of ${seed.collection} (${scope.privateRows && !scope.filtered ? 'your own' : 'a row filter'}): a seed row outside them is not seen, so it is planned as new`,
      },
    ]
  }

  /** The records holding the seed's keys, by key (several when a key is held twice). */
  async function holders(actor: Principal, seed: Seed): Promise<Map<string, Row[]>> {
    const keys = seed.rows.map((row) => row[seed.key])
    const found = await s.records.find(actor, seed.collection, {
      filter: JSON.stringify({ [seed.key]: { _in: keys } }),
      limit: maxSeedRows * 2,
      offset: 0,
    })
    const out = new Map<string, Row[]>()
    for (const record of found.data as Row[]) {
      const k = keyText(record[seed.key])
      out.set(k, [...(out.get(k) ?? []), record])
    }
    return out
  }
  const liveRow = (seed: Seed, record: Row): Row => {
    const columns = Object.keys(seed.rows[0] ?? {})
    const shape = recordCreateShape(record)
    return Object.fromEntries(columns.map((c) => [c, shape[c] ?? null]))
  }
  const liveOf = (seed: Seed, rows: Row[], members: Record<string, string> = {}): LiveResource => ({
    ref: refOf(seed),
    shape: { collection: seed.collection, key: seed.key, rows },
    members,
  })

  async function read(actor: Principal, seed: Seed): Promise<LiveResource[]> {
    const held = await holders(actor, seed)
    const rows: Row[] = []
    const members: Record<string, string> = {}
    for (const row of seed.rows) {
      const records = held.get(keyText(row[seed.key])) ?? []
      if (records.length > 1) return records.map((record) => liveOf(seed, [liveRow(seed, record)]))
      if (records[0]) {
        rows.push(liveRow(seed, records[0]))
        members[keyText(row[seed.key])] = String(records[0].id)
      }
    }
    return rows.length === 0 ? [] : [liveOf(seed, rows, members)]
  }

  async function upsert(actor: Principal, desired: Record<string, unknown>): Promise<LiveResource> {
    const seed = parseSeed(desired)
    const held = await holders(actor, seed)
    for (const row of seed.rows) {
      const records = held.get(keyText(row[seed.key])) ?? []
      if (records.length > 1)
        throw new AppError('conflict', `Two records of ${seed.collection} hold ${seed.key} ${keyText(row[seed.key])}`)
      const record = records[0]
      if (!record) await s.records.create(actor, seed.collection, row)
      else if (keyText(liveRow(seed, record)) !== keyText(liveRow(seed, row)))
        await s.records.update(actor, seed.collection, String(record.id), row, null)
    }
    const [live] = await read(actor, seed)
    if (!live) throw new AppError('conflict', `The seed rows of ${seed.collection} could not be read back`)
    return live
  }

  return {
    kind: 'records',
    notCompared: [],
    immutable: ['collection', 'key'],
    comparable: (shape) => shape,
    check: scopeCheck,
    warnings: (actor, desired) => scopeWarnings(actor, desired),
    // One call per row the live seed lacks or holds otherwise.
    calls(desired, live) {
      const seed = parseSeed(desired)
      const base = `/api/v1/collections/${encodeURIComponent(seed.collection)}/records`
      const liveRows = new Map(
        ((live?.shape.rows ?? []) as Row[]).map((row) => [keyText(row[seed.key]), keyText(row)] as const),
      )
      return seed.rows.flatMap((row): ProposedCall[] => {
        const k = keyText(row[seed.key])
        const id = live?.members?.[k]
        if (id === undefined) return [{ method: 'POST', path: base, body: row }]
        if (liveRows.get(k) === keyText(liveRow(seed, row))) return []
        return [{ method: 'PATCH', path: `${base}/${encodeURIComponent(id)}`, body: row }]
      })
    },
    desired: (body) => {
      const seed = parseSeed(body)
      return { collection: seed.collection, key: seed.key, rows: seed.rows }
    },
    find: (actor, desired) => read(actor, parseSeed(desired)),
    async read(actor, ref, known) {
      if (!known) return null
      const seed = parseSeed(known)
      if (refOf(seed) !== ref) return null
      const [live] = await read(actor, seed)
      return live ?? null
    },
    // The records of `within`, each as its create shape, oldest first: at most one more than a seed holds, so
    // a caller can tell that a collection is too large to seed.
    async list(actor, within) {
      if (within === undefined) return []
      const found = await s.records.find(actor, within, {
        sort: [{ field: 'created_at', order: 'asc' }],
        limit: maxSeedRows + 1,
        offset: 0,
      })
      return (found.data as Row[]).map((record) => ({ ref: String(record.id), shape: recordCreateShape(record) }))
    },
    create: upsert,
    update: (actor, _ref, desired) => upsert(actor, desired),
    // Removing a seed deletes the rows it names (moved to the trash where the collection keeps one).
    removeCalls: (live) => {
      const collection = String(live.shape.collection)
      return Object.values(live.members ?? {}).map((id) => ({
        method: 'DELETE' as const,
        path: `/api/v1/collections/${encodeURIComponent(collection)}/records/${encodeURIComponent(id)}`,
        body: null,
      }))
    },
    async remove(actor, _ref, known) {
      if (!known) return
      const seed = parseSeed(known)
      for (const records of (await holders(actor, seed)).values())
        for (const record of records) await s.records.delete(actor, seed.collection, String(record.id), false)
    },
  }
}
