import type { Kysely } from 'kysely'
import type { Clock } from '../../../lib/clock.js'
import { AppError, isAppError } from '../../../lib/errors.js'
import { newId } from '../../../lib/ids.js'
import type { OutboundClient } from '../../../lib/outbound/index.js'
import type { Principal } from '../../../lib/principal.js'
import type { z } from '../../../lib/http/index.js'
import type { AccessService } from '../../access/index.js'
import type { AuditService } from '../../audit/index.js'
import {
  executeScript,
  scriptContext,
  StepError,
  type RunnableScript,
  type ScriptHost,
} from '../../operations/index.js'
import type { QuotasService, RunsPerHour } from '../quotas/index.js'
import { ScriptCreateSchema, ScriptPatchSchema, ScriptTestSchema, type ScriptPatch } from './schemas.js'
import { createScriptsStore, type ScriptChanges, type ScriptRow } from './store.js'

export interface ScriptsDeps {
  systemDb: Kysely<any>
  clock: Clock
  access: Pick<AccessService, 'authorize'>
  audit: Pick<AuditService, 'record'>
  quotas: Pick<QuotasService, 'limits'>
  /** The runs-per-hour quota: a script test counts as a run (decision 045). */
  runsPerHour: Pick<RunsPerHour, 'count'>
  /** lib/outbound's client: the only way a script's fetch leaves the server. */
  outbound: OutboundClient
}

/** A saved script as the API shows it. */
export interface Script {
  id: string
  projectId: string
  name: string
  description: string
  code: string
  allowed_hosts: string[]
  max_cpu_ms: number
  max_memory_mb: number
  createdBy: string | null
  createdAt: string
  updatedAt: string
}

export interface ScriptTestResult {
  status: 'completed' | 'failed'
  output?: unknown
  error?: { code: string; message: string }
  logs: { level: 'debug' | 'info' | 'warn' | 'error'; message: string }[]
  cpuMs: number
  durationMs: number
}

const notFound = () => new AppError('not_found', 'Script not found')
const iso = (seconds: number) => new Date(seconds * 1000).toISOString()

/**
 * Saved scripts under /api/v1/automate/scripts (automation spec "Scripts"): CRUD with system/automate
 * read, create, update and delete; a test run on mock data with execute. `host` is what run_script
 * reaches as ctx.services.scripts: a script read as the run's principal, the CPU quota, lib/outbound.
 */
export function createScriptsService(deps: ScriptsDeps) {
  const store = createScriptsStore(deps.systemDb)
  const { access, audit, clock } = deps

  async function rowOf(actor: Principal, id: string): Promise<ScriptRow> {
    const row = await store.byId(actor.projectId, id)
    if (!row) throw notFound()
    return row
  }

  const cpuQuotaMs = async (projectId: string) => (await deps.quotas.limits(projectId)).maxScriptCpuMs

  const host: ScriptHost = {
    async find(principal, id) {
      await access.authorize(principal, 'system/automate:read')
      return runnable(await rowOf(principal, id))
    },
    cpuQuotaMs,
    outbound: deps.outbound,
  }

  return {
    host,

    /** The project's scripts, by name. Throws unauthorized, forbidden (system/automate:read). */
    async list(actor: Principal): Promise<Script[]> {
      await access.authorize(actor, 'system/automate:read')
      return (await store.list(actor.projectId)).map(toScript)
    },

    /** One script. Throws unauthorized, forbidden (system/automate:read), not_found. */
    async get(actor: Principal, id: string): Promise<Script> {
      await access.authorize(actor, 'system/automate:read')
      return toScript(await rowOf(actor, id))
    },

    /** Saves a script. Throws unauthorized, forbidden (system/automate:create), validation_error, conflict (name taken). */
    async create(actor: Principal, body: unknown): Promise<Script> {
      await access.authorize(actor, 'system/automate:create')
      const input = parse(ScriptCreateSchema, body)
      const now = clock.seconds()
      const row: ScriptRow = {
        id: newId(),
        project_id: actor.projectId,
        name: input.name,
        description: input.description,
        code: input.code,
        allowed_hosts: JSON.stringify(input.allowed_hosts),
        max_cpu_ms: input.max_cpu_ms,
        max_memory_mb: input.max_memory_mb,
        created_by: actor.userId,
        created_at: now,
        updated_at: now,
      }
      await nameFree(input.name, () => store.insert(row))
      await audit.record({
        projectId: row.project_id,
        action: 'script.created',
        actor,
        target: { type: 'script', id: row.id },
        details: { name: row.name },
      })
      return toScript(row)
    },

    /** Changes the fields sent. Throws unauthorized, forbidden (system/automate:update), not_found, validation_error, conflict. */
    async update(actor: Principal, id: string, body: unknown): Promise<Script> {
      await access.authorize(actor, 'system/automate:update')
      const patch: ScriptPatch = parse(ScriptPatchSchema, body)
      await rowOf(actor, id)
      const changes: ScriptChanges = { updated_at: clock.seconds() }
      if (patch.name !== undefined) changes.name = patch.name
      if (patch.description !== undefined) changes.description = patch.description
      if (patch.code !== undefined) changes.code = patch.code
      if (patch.allowed_hosts !== undefined) changes.allowed_hosts = JSON.stringify(patch.allowed_hosts)
      if (patch.max_cpu_ms !== undefined) changes.max_cpu_ms = patch.max_cpu_ms
      if (patch.max_memory_mb !== undefined) changes.max_memory_mb = patch.max_memory_mb
      const updated = await nameFree(patch.name, () => store.update(actor.projectId, id, changes))
      if (!updated) throw notFound()
      await audit.record({
        projectId: actor.projectId,
        action: 'script.updated',
        actor,
        target: { type: 'script', id },
        details: { name: changes.name ?? (await rowOf(actor, id)).name, fields: Object.keys(patch) },
      })
      return toScript(await rowOf(actor, id))
    },

    /** Deletes a script (flows naming it fail at that step with script_not_found). Throws unauthorized, forbidden (system/automate:delete), not_found. */
    async delete(actor: Principal, id: string): Promise<void> {
      await access.authorize(actor, 'system/automate:delete')
      const row = await rowOf(actor, id)
      if (!(await store.delete(actor.projectId, id))) throw notFound()
      await audit.record({
        projectId: actor.projectId,
        action: 'script.deleted',
        actor,
        target: { type: 'script', id },
        details: { name: row.name },
      })
    },

    /**
     * Runs the saved script on mock data (`input`, `context.trigger|steps|user`) as the caller, with its own
     * bounds (timeout capped at the project's script CPU quota) and its allowed_hosts. A script failure is a
     * result with status failed and the step error's code. It counts against runs per hour, as a dry run
     * does. Throws unauthorized, forbidden (system/automate:execute), not_found, validation_error, quota_exceeded.
     */
    async test(
      actor: Principal,
      id: string,
      body: unknown,
      signal: AbortSignal = new AbortController().signal,
    ): Promise<ScriptTestResult> {
      await access.authorize(actor, 'system/automate:execute')
      const mock = parse(ScriptTestSchema, body ?? {})
      const script = runnable(await rowOf(actor, id))
      await deps.runsPerHour.count(actor.projectId)
      // As run_script with the longest timeout_ms: CPU capped by the quota and the script's max_cpu_ms.
      const timeoutMs = 30_000
      const cpuMs = Math.min(timeoutMs, await cpuQuotaMs(actor.projectId), script.maxCpuMs)
      const context = scriptContext({
        $trigger: mock.context.trigger ?? { body: {} },
        $steps: mock.context.steps ?? {},
        $user: mock.context.user ?? null,
      })
      const started = performance.now()
      const durationMs = () => Math.round(performance.now() - started)
      try {
        const result = await executeScript(deps.outbound, {
          code: script.code,
          input: mock.input,
          context,
          timeoutMs,
          cpuMs,
          memoryMb: script.maxMemoryMb,
          allowedHosts: [script.allowedHosts],
          signal,
        })
        return {
          status: 'completed',
          output: result.output,
          logs: [...result.logs],
          cpuMs: result.cpuMs,
          durationMs: durationMs(),
        }
      } catch (err) {
        if (!(err instanceof StepError)) throw err
        const logs = (err.details.logs as ScriptTestResult['logs'] | undefined) ?? []
        return {
          status: 'failed',
          error: { code: err.code, message: err.message },
          logs,
          cpuMs: Number(err.details.cpuMs ?? 0),
          durationMs: durationMs(),
        }
      }
    },
  }
}

export type ScriptsService = ReturnType<typeof createScriptsService>

function parse<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body)
  if (parsed.success) return parsed.data
  const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }))
  throw new AppError('validation_error', `${issues[0]?.path || 'body'}: ${issues[0]?.message ?? 'invalid'}`, { issues })
}

/** Runs a write, turning the unique name index's refusal into 409 conflict. */
async function nameFree<T>(name: string | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (err) {
    if (isAppError(err) && err.code === 'already_exists')
      throw new AppError('conflict', `A script named "${name}" already exists in this project`, { name })
    throw err
  }
}

function hostsOf(json: string): string[] {
  const parsed = JSON.parse(json) as unknown
  return Array.isArray(parsed) ? parsed.filter((h): h is string => typeof h === 'string') : []
}

function runnable(row: ScriptRow): RunnableScript {
  return {
    id: row.id,
    code: row.code,
    allowedHosts: hostsOf(row.allowed_hosts),
    maxCpuMs: row.max_cpu_ms,
    maxMemoryMb: row.max_memory_mb,
  }
}

function toScript(row: ScriptRow): Script {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    description: row.description,
    code: row.code,
    allowed_hosts: hostsOf(row.allowed_hosts),
    max_cpu_ms: row.max_cpu_ms,
    max_memory_mb: row.max_memory_mb,
    createdBy: row.created_by,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  }
}
