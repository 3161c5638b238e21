import { isOutboundError, type OutboundClient } from '../../lib/outbound/index.js'
import type { Principal } from '../../lib/principal.js'
import {
  runIsolated,
  SandboxFetchError,
  type SandboxFetchRequest,
  type SandboxFetchResponse,
  type SandboxLogLine,
} from '../../lib/sandbox/index.js'
import { StepError } from './types.js'

/** A saved script as run_script and the scripts' test endpoint run it. */
export interface RunnableScript {
  readonly id: string
  readonly code: string
  /** Host names `fetch` may reach (`api.example.com`, or `*.example.com` for its subdomains). */
  readonly allowedHosts: readonly string[]
  readonly maxCpuMs: number
  readonly maxMemoryMb: number
}

/**
 * What run_script needs from the platform, given as `ctx.services.scripts` (wired by the automation
 * module): saved scripts read as the run's principal, the project's script CPU quota, and lib/outbound.
 */
export interface ScriptHost {
  /** A saved script of the principal's project. Throws the scripts service's errors (not_found, forbidden). */
  find(principal: Principal, id: string): Promise<RunnableScript>
  /** The project's script CPU quota in ms (automation quotas, maxScriptCpuMs). */
  cpuQuotaMs(projectId: string): Promise<number>
  readonly outbound: OutboundClient
}

/** The part of `ctx.services` run_script uses. */
export interface ScriptServices {
  readonly scripts: ScriptHost
}

/** Defaults and bounds of a script run (decision 033). */
export const scriptLimits = {
  defaultTimeoutMs: 30_000,
  defaultMemoryMb: 64,
  maxMemoryMb: 256,
  maxFetches: 20,
  maxFetchBytes: 1024 * 1024,
  maxFetchTimeoutMs: 10_000,
} as const

export interface ScriptRunInput {
  readonly code: string
  readonly input: unknown
  /** The template context copied in (`context.trigger`, `context.steps`, …). */
  readonly context: unknown
  /** The whole run, awaits included (run_script timeout_ms). */
  readonly timeoutMs: number
  /** Time in the interpreter: already capped by the quota and the script's max_cpu_ms. */
  readonly cpuMs: number
  readonly memoryMb: number
  /** Host lists that must each allow a fetch's host (the step's allowed_domains, a saved script's allowed_hosts). */
  readonly allowedHosts: readonly (readonly string[])[]
  readonly signal: AbortSignal
}

export interface ScriptRunOutput {
  readonly output: unknown
  readonly logs: readonly SandboxLogLine[]
  readonly cpuMs: number
}

/**
 * Runs a script in the WebAssembly sandbox, in a worker thread (lib/sandbox runIsolated), with its bounds, `fetch` going only to
 * `allowedHosts` and only through lib/outbound (private addresses refused after DNS, redirects not
 * followed). Every failure is a StepError, never retried: script_cpu_limit, script_timeout,
 * script_memory_limit, script_error (its own exception, a syntax error, a stack overflow),
 * script_output_invalid; an abort of `signal` rethrows its reason.
 */
export async function executeScript(outbound: OutboundClient, run: ScriptRunInput): Promise<ScriptRunOutput> {
  let fetches = 0
  const deadline = Date.now() + run.timeoutMs
  const fetch = async (request: SandboxFetchRequest, signal: AbortSignal): Promise<SandboxFetchResponse> => {
    if (++fetches > scriptLimits.maxFetches)
      throw new SandboxFetchError('too_many_fetches', `A script may fetch at most ${scriptLimits.maxFetches} times`)
    const host = hostOf(request.url)
    if (!run.allowedHosts.every((list) => hostAllowed(host, list)))
      throw new SandboxFetchError('domain_not_allowed', `fetch to '${host}' is not in allowed_domains`)
    try {
      const response = await outbound.fetch(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: AbortSignal.any([signal, run.signal]),
        timeoutMs: Math.max(1, Math.min(scriptLimits.maxFetchTimeoutMs, deadline - Date.now())),
        maxResponseBytes: scriptLimits.maxFetchBytes,
        // A redirect is answered to the script as it is: following it here would leave allowed_domains.
        redirect: 'manual',
      })
      return {
        url: response.url,
        status: response.status,
        statusText: response.statusText,
        headers: Object.fromEntries(response.headers),
        body: response.text(),
      }
    } catch (err) {
      if (isOutboundError(err)) throw new SandboxFetchError(err.code, err.message)
      throw err
    }
  }
  const result = await runIsolated({
    code: run.code,
    input: run.input,
    context: run.context,
    cpuMs: run.cpuMs,
    timeoutMs: run.timeoutMs,
    memoryBytes: run.memoryMb * 1024 * 1024,
    signal: run.signal,
    fetch,
  })
  if (result.ok) return { output: result.value, logs: result.logs, cpuMs: result.cpuMs }
  const details = { name: result.name, message: result.message, cpuMs: result.cpuMs, logs: result.logs }
  switch (result.kind) {
    case 'cpu':
      throw new StepError(
        'script_cpu_limit',
        `The script used up its CPU time (${run.cpuMs} ms)`,
        { ...details, limitMs: run.cpuMs },
        400,
        false,
      )
    case 'timeout':
      throw new StepError(
        'script_timeout',
        `The script did not finish within ${run.timeoutMs} ms`,
        { ...details, limitMs: run.timeoutMs },
        400,
        false,
      )
    case 'memory':
      throw new StepError(
        'script_memory_limit',
        `The script ran out of memory (${run.memoryMb} MB)`,
        { ...details, limitMb: run.memoryMb },
        400,
        false,
      )
    case 'output':
      throw new StepError(
        'script_output_invalid',
        `The script's result cannot be kept: ${result.message}`,
        details,
        400,
        false,
      )
    case 'aborted':
      throw run.signal.reason instanceof Error
        ? run.signal.reason
        : new StepError('aborted', 'The run was stopped', details, 400, false)
    default:
      throw new StepError('script_error', `${result.name}: ${result.message}`, details, 400, false)
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase().replace(/^\[|\]$/g, '')
  } catch {
    throw new SandboxFetchError('bad_url', 'fetch needs an absolute http(s) URL')
  }
}

/** `api.example.com` allows that host only; `*.example.com` allows its subdomains (not example.com itself). */
export function hostAllowed(host: string, allowed: readonly string[]): boolean {
  return allowed.some((entry) => {
    const pattern = entry.trim().toLowerCase().replace(/\.$/, '')
    if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1
    return host === pattern
  })
}
