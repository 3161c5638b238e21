import { z } from 'zod'
import { isAppError } from '../../../lib/errors.js'
import { numeric } from '../schema-helpers.js'
import { executeScript, scriptLimits, type RunnableScript, type ScriptHost } from '../scripts.js'
import { defineOperation, StepError, type OperationContext } from '../types.js'

const hostPattern =
  /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.?$|^[0-9a-fA-F:.]+$/

/** A host name `fetch` may reach: `api.example.com`, `*.example.com` (its subdomains) or an address. */
export const AllowedHostSchema = z
  .string()
  .min(1)
  .max(253)
  .regex(hostPattern, 'must be a host name, *.domain or an address')

/**
 * Runs JavaScript (inline `code` or a saved script) in the WebAssembly sandbox: the code is the body of an
 * async function of (input, context) and what it returns is `output`. CPU time, memory and wall time are
 * bounded; `fetch` reaches only `allowed_domains` (and a saved script's allowed_hosts) through lib/outbound.
 */
export const runScript = defineOperation({
  type: 'run_script',
  category: 'script',
  label: 'Run script',
  description:
    'Runs JavaScript in a sandbox (QuickJS in WebAssembly): the body of an async function of (input, context) whose return value is output ($steps.<key>.output). No host objects; fetch only to allowed_domains.',
  // fetch may send requests to the allowed hosts: such a step is not run in a dry run. Without allowed_domains
  // the sandbox reaches nothing (no host objects, every fetch refused): it computes, or reads its saved script.
  effects: 'writes',
  effectsNote: 'none without allowed_domains (reads with scriptId: the saved script)',
  effectsWhen: (config) => {
    if (
      config.allowed_domains !== undefined &&
      !(Array.isArray(config.allowed_domains) && config.allowed_domains.length === 0)
    )
      return 'writes'
    return config.scriptId === undefined ? 'none' : 'reads'
  },
  needs: (config) => (config.scriptId === undefined ? [] : [{ resource: 'system/automate', action: 'read' }]),
  rawPaths: ['code'],
  configSchema: z
    .strictObject({
      code: z
        .string()
        .min(1)
        .max(100_000)
        .optional()
        .describe('The script: the body of an async function of (input, context); exactly one of code and scriptId'),
      scriptId: z
        .string()
        .min(1)
        .max(100)
        .optional()
        .describe('A saved script (/scripts); exactly one of code and scriptId'),
      input: z.record(z.string(), z.unknown()).default({}).describe('Given to the script as `input`'),
      timeout_ms: numeric(z.number().int().min(100).max(30_000))
        .default(scriptLimits.defaultTimeoutMs)
        .describe(
          "Bounds the script's run, waits included (100-30000 ms); its CPU time is this capped at the project's script CPU quota",
        ),
      allowed_domains: z
        .array(AllowedHostSchema)
        .max(50)
        .default([])
        .describe('Hosts fetch may reach (empty blocks every fetch)'),
    })
    .superRefine((config, ctx) => {
      if ((config.code === undefined) === (config.scriptId === undefined))
        ctx.addIssue({ code: 'custom', path: ['code'], message: 'exactly one of code and scriptId is required' })
    }),
  async run(config, ctx) {
    const host = scriptHostOf(ctx)
    const saved = config.scriptId === undefined ? null : await findScript(host, ctx, config.scriptId)
    // The CPU time is timeout_ms capped at the project's script quota (and a saved script's max_cpu_ms); timeout_ms also bounds the whole run, waits included.
    const timeoutMs = config.timeout_ms
    const cpuMs = Math.min(timeoutMs, await host.cpuQuotaMs(ctx.run.projectId), saved?.maxCpuMs ?? timeoutMs)
    const result = await executeScript(host.outbound, {
      code: saved?.code ?? config.code!,
      input: config.input,
      context: scriptContext(ctx.data),
      timeoutMs,
      cpuMs,
      memoryMb: saved?.maxMemoryMb ?? scriptLimits.defaultMemoryMb,
      allowedHosts: saved ? [config.allowed_domains, saved.allowedHosts] : [config.allowed_domains],
      signal: ctx.signal,
    }).catch((err: unknown) => {
      if (err instanceof StepError)
        for (const line of (err.details.logs as typeof result.logs | undefined) ?? []) ctx.log(line)
      throw err
    })
    for (const line of result.logs) ctx.log(line)
    return { output: result.output, cpuMs: result.cpuMs }
  },
})

/** The template context as the script's `context` argument (plain JSON). */
export function scriptContext(data: Readonly<Record<string, unknown>>) {
  return {
    trigger: data.$trigger ?? null,
    steps: data.$steps ?? {},
    user: data.$user ?? null,
    flow: data.$flow ?? null,
    run: data.$run ?? null,
    now: data.$now ?? null,
  }
}

function scriptHostOf(ctx: OperationContext): ScriptHost {
  return ctx.services.scripts
}

/** A saved script read as the run's principal: hidden or missing is script_not_found. */
async function findScript(host: ScriptHost, ctx: OperationContext, id: string): Promise<RunnableScript> {
  try {
    return await host.find(ctx.principal, id)
  } catch (err) {
    if (isAppError(err) && err.code === 'forbidden')
      throw new StepError('forbidden', `The run may not read scripts: ${err.message}`, {}, 403, false)
    if (isAppError(err) && err.code === 'not_found')
      throw new StepError('script_not_found', `No script '${id}'`, {}, 404, false)
    throw err
  }
}
