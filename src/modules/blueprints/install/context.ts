import type { Clock } from '../../../lib/clock.js'
import type { Logger } from '../../../lib/log.js'
import type { Principal } from '../../../lib/principal.js'
import { compileBody } from '../document/compile.js'
import type { Brick, BlueprintReport } from '../document/read.js'
import type { LedgerStore } from '../ledger/store.js'
import { withoutPaths } from '../providers/canonical.js'
import type { BrickProvider } from '../providers/provider.js'

/** What the install routes work with. */
export interface InstallContext {
  store: LedgerStore
  providers: () => ReadonlyMap<string, BrickProvider>
  clock: Clock
  log: Pick<Logger, 'warn'>
}

/** An install's resource rows read back are stale after an hour without a word (the hourly sweep). */
export const unspokenAfterMs = 3_600_000

/** The shape a plan compares and hashes, for a kind. */
export const comparedShape = (provider: BrickProvider, shape: Record<string, unknown>) =>
  withoutPaths(provider.comparable(shape), provider.notCompared)

/** A brick's desired create shape from the stored document and parameter values (settle recompiles it). */
export function compileBrick(
  provider: BrickProvider,
  report: BlueprintReport,
  brick: Brick,
  values: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return provider.desired(compileBody(brick.body, report.envelope?.params ?? [], values).value)
}

/** Who may open, settle and uninstall: a person (spec: before grants are consulted). */
export function isPerson(principal: Principal): boolean {
  return principal.kind !== 'system' && principal.kind !== 'anonymous' && principal.userId !== null
}
