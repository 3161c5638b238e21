import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import { AppError, isAppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import {
  structures,
  type Collection,
  type CollectionsService,
  type FieldChangeHooks,
  type FieldDef,
} from '../collections/index.js'
import type { BeforeWriteHook, RecordsService } from '../records/index.js'
import type { SettingsService } from '../settings/index.js'
import { fieldStructure, fingerprintOf, type FieldStructure } from './field-structure.js'
import { GroupSet, presentGroup, type Group } from './groups.js'
import { createJobRunner } from './jobs.js'
import { optionSetsOf, type LabelLocale, type OptionSet } from './options.js'
import { decodeCursor, encodeCursor, presentJob, type JobView } from './present.js'
import { checkFixes } from './repairer.js'
import { candidates, type Estimate, type Opened } from './rows.js'
import { scanBatch } from './scanner.js'
import { createJobStore, type JobKind, type JobRow } from './store.js'

export interface StructureDeps {
  systemDb: Kysely<any>
  collections: CollectionsService
  records: RecordsService
  access: AccessService
  settings: SettingsService
  clock: Clock
  log: Logger
  /** Awaited before every batch of a background job (default: one turn of the event loop). */
  pace?: () => Promise<void>
}

export interface ScanPage {
  checked: number
  invalid: number
  nextCursor: string | null
  estimate?: Estimate
  groups: Group[]
}

export interface FieldOptions {
  field: string
  type: string
  optionSets: OptionSet[]
}

export const scanPageLimits = { default: 200, max: 1000 } as const
/** A running job whose row has not moved for this long lost its instance (ms). */
const staleAfter = 10 * 60_000
const localePattern = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8}){0,4}$/
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * Structure scans, repairs, enforcement hooks and field options (core-api "Structure scan and repair
 * endpoints", "Option set"; addendum §4). The builder grant (system/roles:read) is checked by the routes;
 * here a collection the caller may not read is COLLECTION_NOT_FOUND, and a field that does not exist or
 * that the caller may not read is NOT_FOUND, alike.
 */
/** The grant scans and repairs need (core-api "Structure scan and repair endpoints": the builder role's). */
export const builderPermission = 'system/roles:read'

export function createStructureService(deps: StructureDeps) {
  const store = createJobStore(deps.systemDb)
  const runner = createJobRunner({
    store,
    collections: deps.collections,
    records: deps.records,
    clock: deps.clock,
    log: deps.log,
    pace: deps.pace ?? nextTurn,
  })

  async function visibleCollection(principal: Principal, name: string): Promise<Collection> {
    try {
      return await deps.collections.visible(principal, name)
    } catch (err) {
      if (isAppError(err) && err.code === 'collection_not_found')
        throw new AppError('COLLECTION_NOT_FOUND', err.message)
      throw err
    }
  }

  function findField(collection: Collection, name: string, readable: readonly string[] | null): FieldDef {
    const def = collection.fields.find((f) => f.name === name)
    if (!def || (readable !== null && !readable.includes(name)))
      throw new AppError('NOT_FOUND', `Field "${name.slice(0, 60)}" not found`, { field: name.slice(0, 60) })
    return def
  }

  /** Throws unauthorized, or FORBIDDEN (the spec's spelling) without the builder grant scans and repairs need. */
  async function assertBuilder(principal: Principal): Promise<void> {
    try {
      await deps.access.authorize(principal, builderPermission)
    } catch (err) {
      if (isAppError(err) && err.code === 'forbidden') throw new AppError('FORBIDDEN', err.message, err.details)
      throw err
    }
  }

  /** The collection, opened for reading its rows as the caller, and the field's structure (the builder grant first). */
  async function target(
    principal: Principal,
    name: string,
    field: string,
  ): Promise<{ collection: Collection; opened: Opened; fs: FieldStructure }> {
    await assertBuilder(principal)
    const collection = await visibleCollection(principal, name)
    let opened: Opened
    try {
      opened = await deps.records.open(principal, name, 'read')
    } catch (err) {
      if (isAppError(err) && err.code === 'forbidden')
        throw new AppError('FORBIDDEN', `Scanning reads the records: ${err.message}`, err.details)
      throw err
    }
    const def = findField(collection, field, opened.scope.fields)
    const fs = fieldStructure(def)
    if (!fs) {
      throw new AppError(
        'VALIDATION_ERROR',
        `Field "${def.name}" has no structure to check (a json field with structure, an enum or a multi_enum)`,
        { field: def.name },
      )
    }
    return { collection, opened, fs }
  }

  async function labelLocale(principal: Principal, locale: string | undefined): Promise<LabelLocale> {
    const fallback = await deps.settings.get(principal.projectId, 'i18n.defaultLocale')
    if (locale === undefined || locale === '') return { locale: fallback, fallback }
    if (!localePattern.test(locale))
      throw new AppError('invalid_request', 'locale must be a BCP-47 locale (en, pt-BR…)')
    return { locale, fallback }
  }

  /** The read allowlist of the caller on the collection (null: every field). Schema readers without a grant see every field. */
  async function readableFields(principal: Principal, collection: Collection): Promise<readonly string[] | null> {
    const decision = await deps.access.decide(principal, `collections/${collection.name}`, 'read')
    return decision.allowed ? decision.fields : null
  }

  async function requireJob(principal: Principal, name: string, kind: JobKind, jobId: string): Promise<JobRow> {
    await assertBuilder(principal)
    const collection = await visibleCollection(principal, name)
    const now = deps.clock.now()
    await store.failStale(principal.projectId, collection.id, now - staleAfter, now)
    const row = await store.find(principal.projectId, collection.id, kind, jobId)
    if (!row) throw new AppError('NOT_FOUND', `No ${kind} job ${jobId.slice(0, 40)} on this collection`)
    return row
  }

  async function insertJob(
    principal: Principal,
    collection: Collection,
    fs: FieldStructure,
    kind: JobKind,
    estimate: Estimate,
    repair: string | null,
  ): Promise<JobRow> {
    const now = deps.clock.now()
    const row: JobRow = {
      id: newId(),
      project_id: principal.projectId,
      collection_id: collection.id,
      collection: collection.name,
      field: fs.def.name,
      kind,
      status: 'running',
      fingerprint: fs.fingerprint,
      outdated: false,
      checked: 0,
      invalid: 0,
      estimate: JSON.stringify(estimate),
      groups: '[]',
      cursor: null,
      repair,
      error: null,
      started_by: principal.userId,
      started_at: now,
      updated_at: now,
    }
    await store.insert(row)
    return row
  }

  const fieldChanges: FieldChangeHooks = {
    /** Switching a json field to strict needs a clean, complete, current scan; a strict field's shape may only widen. Throws conflict. */
    async before(collection, next) {
      for (const def of next) {
        const wanted = structures.structureOf(def)
        const old = collection.fields.find((f) => f.name === def.name)
        if (wanted?.enforcement !== 'strict' || !old) continue
        const had = structures.structureOf(old)
        const fingerprint = fingerprintOf(wanted.shape)
        if (had?.enforcement === 'strict') {
          if (fingerprintOf(had.shape) === fingerprint || structures.shapeWidens(had.shape, wanted.shape)) continue
          throw new AppError(
            'conflict',
            `Field "${def.name}" is strict: its shape may only widen (values, entries added); set enforcement to warn, change the shape, scan, then switch back to strict`,
            { field: def.name },
          )
        }
        if (!had || fingerprintOf(had.shape) !== fingerprint) {
          throw new AppError(
            'conflict',
            `Field "${def.name}": save the new shape with enforcement warn or off and scan it before switching to strict`,
            { field: def.name },
          )
        }
        const latest = await store.latestScan(collection.projectId, collection.id, def.name)
        const clean =
          latest &&
          latest.status === 'complete' &&
          Number(latest.invalid) === 0 &&
          !latest.outdated &&
          latest.fingerprint === fingerprint
        if (!clean) {
          const scan = latest
            ? {
                jobId: latest.id,
                status: latest.status,
                invalid: Number(latest.invalid),
                current: !latest.outdated && latest.fingerprint === fingerprint,
              }
            : null
          throw new AppError(
            'conflict',
            `Field "${def.name}" can switch to strict only after a complete scan job of its current shape found 0 invalid records`,
            { field: def.name, scan },
          )
        }
      }
    },
    /** A changed structure supersedes the field's running jobs and outdates its earlier scans. Never throws. */
    async after(collection, next) {
      try {
        for (const def of next) {
          const old = collection.fields.find((f) => f.name === def.name)
          if (!old) continue
          if ((fieldStructure(old)?.fingerprint ?? null) !== (fieldStructure(def)?.fingerprint ?? null)) {
            await store.supersede(collection.projectId, collection.id, def.name, deps.clock.now())
          }
        }
      } catch (err) {
        deps.log.error({ err, collection: collection.name }, 'could not supersede structure jobs')
      }
    },
  }

  /** Enforcement warn: the write goes through, and the server log says which field and path do not match. */
  const warnOnWrite: BeforeWriteHook = (write) => {
    if (write.action === 'delete') return
    for (const [name, value] of Object.entries(write.data)) {
      if (value === null || value === undefined) continue
      const def = write.collection.fields.find((f) => f.name === name)
      const structure = def ? structures.structureOf(def) : null
      if (structure?.enforcement !== 'warn') continue
      const issue = structures.firstIssue(value, structure.shape)
      if (!issue) continue
      deps.log.warn(
        {
          collection: write.collection.name,
          field: name,
          path: structures.renderPath(issue.path, false),
          code: issue.code,
          recordId: write.before?.id ?? null,
        },
        'json value does not match its structure (enforcement warn); written anyway',
      )
    }
  }

  return {
    fieldChanges,
    warnOnWrite,

    /** The option sets of one field. Throws COLLECTION_NOT_FOUND, NOT_FOUND, invalid_request (locale). */
    async fieldOptions(principal: Principal, name: string, field: string, locale?: string): Promise<FieldOptions> {
      const collection = await visibleCollection(principal, name)
      const def = findField(collection, field, await readableFields(principal, collection))
      return { field: def.name, type: def.type, optionSets: optionSetsOf(def, await labelLocale(principal, locale)) }
    },

    /** The option sets of several fields (all readable ones when none are named); fields without any are left out. Throws as fieldOptions. */
    async collectionOptions(
      principal: Principal,
      name: string,
      fields: string | undefined,
      locale?: string,
    ): Promise<{ collection: string; fields: FieldOptions[] }> {
      const collection = await visibleCollection(principal, name)
      const readable = await readableFields(principal, collection)
      const named = (fields ?? '')
        .split(',')
        .map((f) => f.trim())
        .filter(Boolean)
      const defs =
        named.length > 0
          ? [...new Set(named)].map((f) => findField(collection, f, readable))
          : collection.fields.filter((f) => readable === null || readable.includes(f.name))
      const chosen = await labelLocale(principal, locale)
      const out = defs
        .map((def) => ({ field: def.name, type: def.type, optionSets: optionSetsOf(def, chosen) }))
        .filter((f) => f.optionSets.length > 0)
      return { collection: collection.name, fields: out }
    },

    /**
     * One batch of a cursor scan: up to `limit` candidate rows after the cursor (fewer when the byte cap is
     * reached), the estimate on the first batch. Throws COLLECTION_NOT_FOUND, FORBIDDEN, NOT_FOUND,
     * VALIDATION_ERROR (no structure), invalid_request (cursor), conflict (the structure changed since the cursor).
     */
    async scan(
      principal: Principal,
      name: string,
      field: string,
      query: { cursor?: string; limit: number },
    ): Promise<ScanPage> {
      const { opened, fs } = await target(principal, name, field)
      let after: string | null = null
      if (query.cursor) {
        const cursor = decodeCursor(query.cursor)
        if (cursor.fingerprint !== fs.fingerprint)
          throw new AppError('conflict', 'The field’s structure changed since this cursor; start again without one')
        after = cursor.after
      }
      const rows = candidates(opened, fs)
      const estimate = after === null ? await rows.estimate() : undefined
      const groups = new GroupSet(fs)
      const batch = await scanBatch(rows.source, fs, groups, after, query.limit)
      return {
        checked: batch.checked,
        invalid: batch.invalid,
        nextCursor: batch.done || batch.lastId === null ? null : encodeCursor(batch.lastId, fs.fingerprint),
        ...(estimate ? { estimate } : {}),
        groups: groups.list().map(presentGroup),
      }
    },

    /** Starts a background scan job (status running). Throws as scan. */
    async startScan(principal: Principal, name: string, field: string): Promise<JobView> {
      const { collection, opened, fs } = await target(principal, name, field)
      const row = await insertJob(principal, collection, fs, 'scan', await candidates(opened, fs).estimate(), null)
      runner.scan(row, principal)
      return presentJob(row)
    },

    /** Starts a background repair job with checked fixes. Throws as scan, and VALIDATION_ERROR for the fixes. */
    async startRepair(principal: Principal, name: string, field: string, fixes: unknown): Promise<JobView> {
      const { collection, opened, fs } = await target(principal, name, field)
      const checked = checkFixes(fs, fixes)
      const repair = JSON.stringify({ fixes: checked.length, repaired: 0, skipped: 0, failed: 0, failures: [] })
      const row = await insertJob(principal, collection, fs, 'repair', await candidates(opened, fs).estimate(), repair)
      runner.repair(row, principal, checked)
      return presentJob(row)
    },

    /** One job of the collection. Throws COLLECTION_NOT_FOUND, NOT_FOUND. */
    async job(principal: Principal, name: string, kind: JobKind, jobId: string): Promise<JobView> {
      return presentJob(await requireJob(principal, name, kind, jobId))
    },

    /** Cancels a running job (its report so far is kept; writes made remain); a finished job is answered as it is. */
    async cancel(principal: Principal, name: string, kind: JobKind, jobId: string): Promise<JobView> {
      const row = await requireJob(principal, name, kind, jobId)
      if (row.status !== 'running') return presentJob(row)
      await store.finish(row.project_id, row.id, 'cancelled', { updated_at: deps.clock.now() })
      return presentJob((await store.find(row.project_id, row.collection_id, kind, row.id)) ?? row)
    },

    /** Stops this instance's jobs (they are marked failed) before the databases close. */
    close: () => runner.close(),
  }
}

export type StructureService = ReturnType<typeof createStructureService>
