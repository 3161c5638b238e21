import { isAppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import { forEachString } from '../document/compile.js'
import type { InstallRow, ResourceRow } from '../ledger/store.js'
import { contentHash } from '../providers/canonical.js'
import type { BrickProvider, LiveResource } from '../providers/provider.js'
import type { PlannedBrick } from '../plan/planner.js'
import { comparedShape, type InstallContext } from './context.js'

const secretRef = /\$\{secret:([A-Za-z_][A-Za-z0-9_]*)\}/g

/** The planned bricks an apply writes: those with calls, less those needing consent not given. */
const writes = (p: PlannedBrick, consent: ReadonlySet<string>) =>
  p.calls.length > 0 && (!p.verdict.requiresConsent || consent.has(p.brick.id))

/** The secret parameters the writes of an apply use (their values must come with the request). */
export function secretsNeeded(planned: readonly PlannedBrick[], consent: ReadonlySet<string>): string[] {
  const names = new Set<string>()
  for (const p of planned)
    if (writes(p, consent))
      forEachString(p.desired, (text) => {
        for (const [, name] of text.matchAll(secretRef)) names.add(name!)
      })
  return [...names].sort()
}

/** `value` with each `${secret:name}` replaced by its value: only ever handed to a service, never stored. */
function withSecrets(value: unknown, secrets: Readonly<Record<string, string>>): unknown {
  if (typeof value === 'string') return value.replace(secretRef, (_, name: string) => secrets[name] ?? '')
  if (Array.isArray(value)) return value.map((v) => withSecrets(v, secrets))
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withSecrets(v, secrets)]))
  return value
}

/** Why a write failed, for the row: the service's code and words, never a stack. */
const failure = (err: unknown) => (isAppError(err) ? `${err.code}: ${err.message}` : 'internal: the write failed')

/**
 * Applies a run's pending rows in dependency order as the caller (?apply=true): each through its kind's
 * provider (the service method its route calls), then read back and settled with the hash computed here.
 * A brick whose dependency failed is not tried; one needing consent not given is skipped.
 */
export async function applyPlanned(
  ctx: InstallContext,
  actor: Principal,
  install: InstallRow,
  planned: readonly PlannedBrick[],
  rows: ReadonlyMap<string, ResourceRow>,
  consent: ReadonlySet<string>,
  secrets: Readonly<Record<string, string>>,
): Promise<void> {
  const providers = ctx.providers()
  const unavailable = new Set<string>()
  // A brick that ends with no settled resource leaves its dependents untried.
  const set = async (row: ResourceRow, changes: Partial<ResourceRow>) => {
    if (changes.status !== 'settled' && !(changes.status === 'skipped' && row.resource_ref !== null))
      unavailable.add(row.brick_id)
    await ctx.store.updateResource(install.project_id, row.id, { ...changes, updated_at: ctx.clock.now() })
  }
  for (const p of planned) {
    const row = rows.get(p.brick.id)
    if (!row || row.status !== 'pending') continue
    const provider = providers.get(p.brick.kind)!
    const missing = p.brick.needs.find((id) => unavailable.has(id))
    if (missing !== undefined) {
      await set(row, { status: 'failed', error: `not tried: it needs ${missing}, which was not installed` })
      continue
    }
    if (!writes(p, consent)) {
      await set(row, { status: 'skipped', error: 'needs consent: its brick id was not in consent' })
      continue
    }
    const desired = withSecrets(p.desired, secrets) as Record<string, unknown>
    try {
      const written: LiveResource =
        p.live === null || !provider.update
          ? await provider.create(actor, desired)
          : await provider.update(actor, p.live.ref, desired)
      await set(row, await readBack(provider, actor, written.ref, p.desired!))
    } catch (err) {
      if (!isAppError(err)) ctx.log.warn({ err, brickId: p.brick.id }, 'blueprint install: a write failed')
      await set(row, { status: 'failed', error: failure(err) })
    }
    await ctx.store.touch(install.project_id, install.id, ctx.clock.now())
  }
}

/**
 * A resource read back as the caller after its write (spec: settle): its ref, the compared shape and the
 * content hash computed here; failed when it is absent or the caller cannot read it.
 */
export async function readBack(
  provider: BrickProvider,
  actor: Principal,
  ref: string,
  desired: Record<string, unknown>,
): Promise<Partial<ResourceRow>> {
  let live: LiveResource | null
  try {
    live = await provider.read(actor, ref, desired)
  } catch (err) {
    if (isAppError(err) && (err.code === 'forbidden' || err.code === 'unauthorized'))
      return { status: 'failed', resource_ref: ref, error: 'read.permission_missing: you cannot read it back' }
    throw err
  }
  if (!live) return { status: 'failed', resource_ref: ref, error: 'absent on read-back' }
  const shape = comparedShape(provider, live.shape)
  return {
    status: 'settled',
    resource_ref: live.ref,
    content_hash: contentHash(shape),
    canonical_json: JSON.stringify(shape),
    error: null,
  }
}
