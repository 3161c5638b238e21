import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import { AppError } from '../../lib/errors.js'
import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import { documentSource } from './document-source.js'
import { readBlueprint, type BlueprintReport } from './document/read.js'
import { planBlueprint } from './plan/planner.js'
import type { PlanResult } from './plan/verdicts.js'
import type { BrickProvider } from './providers/index.js'
import type { PlanRequest, ValidateRequest, ValidateResult } from './schemas.js'
import type { ExportRequest } from './export/request.js'
import { exportBlueprint, type ExportResult } from './export/service.js'
import { isPerson, type InstallContext } from './install/context.js'
import { openInstall } from './install/open.js'
import { presentInstall, type Install } from './install/present.js'
import type { InstallRequest, SettleRequest, UninstallRequest } from './install/schemas.js'
import { settleInstall } from './install/settle.js'
import { sweepInstalls } from './install/sweep.js'
import { previewUninstall, uninstall, type UninstallPreview } from './install/uninstall.js'
import { loadLedger, namespaceOf } from './ledger/load.js'
import { createLedgerStore } from './ledger/store.js'

export interface BlueprintsService {
  /**
   * Reads and checks a document sent as source or as an archive, for any signed-in caller. A failing
   * document is an answer (ok false), not an error; the source is never echoed. Throws unauthorized,
   * invalid_request (neither or both of source and archive; an archive refused, details.code), and
   * payload_too_large (a source over 1,000,000 bytes; an archive or its document over its cap).
   */
  validate(principal: Principal, input: ValidateRequest): Promise<ValidateResult>
  /**
   * What installing the document would do to the project, as the caller reads it (decision 069); writes
   * nothing. Needs a person (403 install_needs_person for a key without one and the system) holding
   * system/blueprints:read. Throws as validate does, and invalid_request for a secret parameter's value.
   */
  plan(principal: Principal, input: PlanRequest): Promise<PlanResult>
  /**
   * Opens an install run (decision 070): planned against the ledger, refused when the document fails (400
   * invalid_request, details.diagnostics) or a brick is BLOCKED (409 conflict, details.verdicts). Two-phase:
   * the run with pending rows and the calls to make. With `apply`: every call made here as the caller and
   * each row settled from its read-back; the run answered complete or partial. Needs a person and
   * system/blueprints:read; each brick's write is its service's own check.
   */
  open(principal: Principal, input: InstallRequest, apply: boolean): Promise<Install>
  /** The opener's outcomes, each verified by a read-back (403 for anyone else; 409 once the run ended). */
  settle(principal: Principal, id: string, input: SettleRequest): Promise<Install>
  /** The project's install runs, newest first (`blueprintId`: one blueprint's). */
  list(principal: Principal, blueprintId?: string): Promise<Install[]>
  /** One run; not_found for another project's. */
  get(principal: Principal, id: string): Promise<Install>
  /** What uninstalling the blueprint's live run would remove, and the calls; writes nothing. */
  previewUninstall(principal: Principal, id: string): Promise<UninstallPreview>
  /** Uninstalls the live run: records what was removed, or with `apply` removes each resource as the caller. */
  uninstall(principal: Principal, id: string, input: UninstallRequest, apply: boolean): Promise<Install>
  /**
   * A project, or part of it, as a document, read as the caller (decision 071): system/blueprints:read;
   * credentials as secret parameters, never values.
   */
  export(principal: Principal, request: ExportRequest): Promise<ExportResult>
  /** The hourly sweep: runs unspoken for an hour become partial (no principal: maintenance). */
  sweep(): Promise<number>
}

export interface BlueprintsDeps {
  access: { authorize(principal: Principal, permission: string): Promise<void> }
  /** One provider per brick kind, over the modules' services. */
  providers: () => ReadonlyMap<string, BrickProvider>
  systemDb: Kysely<any>
  clock: Clock
  log: Pick<Logger, 'warn'>
}

/** Blueprints: documents read and checked, planned against the project, installed through a ledger (issue 30). */
export function createBlueprintsService(deps: BlueprintsDeps): BlueprintsService {
  const ctx: InstallContext = {
    store: createLedgerStore(deps.systemDb),
    providers: deps.providers,
    clock: deps.clock,
    log: deps.log,
  }
  /** Anonymous 401; a person where one is needed (before grants are consulted, spec); then the read grant. */
  const gate = async (principal: Principal, person: boolean, doing: string) => {
    if (principal.kind === 'anonymous') throw new AppError('unauthorized', `Sign in to ${doing}`)
    if (person && !isPerson(principal))
      throw new AppError(
        'install_needs_person',
        'Blueprints are planned and installed by a person, not a key or the system',
      )
    await deps.access.authorize(principal, 'system/blueprints:read')
  }
  return {
    async validate(principal, input) {
      if (principal.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to validate a blueprint')
      return presentValidation(readBlueprint(await documentSource(input)))
    },

    async plan(principal, input) {
      // A plan is a person's review before an install.
      await gate(principal, true, 'plan a blueprint')
      const report = readBlueprint(await documentSource(input))
      const envelope = report.envelope
      const namespace = namespaceOf(envelope?.params ?? [], input.params ?? {})
      const ledger = envelope?.id ? await loadLedger(ctx.store, principal.projectId, envelope.id, namespace) : undefined
      return planBlueprint(deps.providers(), principal, report, input, ledger)
    },

    async open(principal, input, apply) {
      await gate(principal, true, 'install a blueprint')
      return openInstall(ctx, principal, input, apply)
    },

    async settle(principal, id, input) {
      await gate(principal, true, 'settle an install')
      return settleInstall(ctx, principal, id, input)
    },

    async list(principal, blueprintId) {
      await gate(principal, false, 'list installs')
      const runs = await ctx.store.installs(principal.projectId, blueprintId)
      return Promise.all(
        runs.map(async (run) => presentInstall(run, await ctx.store.resources(run.project_id, run.id))),
      )
    },

    async get(principal, id) {
      await gate(principal, false, 'read an install')
      const run = await ctx.store.install(principal.projectId, id)
      if (!run) throw new AppError('not_found', 'No such install in this project')
      return presentInstall(run, await ctx.store.resources(run.project_id, run.id))
    },

    async previewUninstall(principal, id) {
      await gate(principal, true, 'uninstall a blueprint')
      return previewUninstall(ctx, principal, id)
    },

    async uninstall(principal, id, input, apply) {
      await gate(principal, true, 'uninstall a blueprint')
      return uninstall(ctx, principal, id, input, apply)
    },

    export: (principal, request) => exportBlueprint(deps, principal, request),

    sweep: () => sweepInstalls(ctx),
  }
}

/** The validate answer: what the document declares and holds, never its text or a parameter's default. */
export function presentValidation(report: BlueprintReport): ValidateResult {
  const envelope = report.envelope
  return {
    ok: report.ok,
    diagnostics: [...report.diagnostics],
    blueprint: {
      id: envelope?.id ?? null,
      name: envelope?.name ?? null,
      version: envelope?.version ?? null,
      publisher: null,
      params: (envelope?.params ?? []).map((p) => ({
        name: p.name,
        type: p.type,
        namespace: p.namespace,
        required: !p.hasDefault,
        secret: p.type === 'secret',
      })),
      assemblies: (envelope?.assemblies ?? []).map((a) => ({
        key: a.key,
        title: a.title,
        required: a.required,
        bricks: [...a.bricks],
      })),
    },
    bricks: report.bricks.map((b) => ({ id: b.id, kind: b.kind, needs: [...b.needs], title: b.title })),
  }
}
