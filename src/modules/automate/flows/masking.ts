import { isCredentialHeader } from '../../../lib/credential-headers.js'

/**
 * Credential masking of flows (automation spec "Credential masking"): credential values in step configs
 * and in a webhook trigger's config are shown as eight bullets to callers without system/automate:update,
 * in exports (to everyone) and in a run's recorded step input. On write a mask means "unchanged": it is
 * restored from the stored step with the same key, and dropped when nothing is stored there.
 */

/** Eight U+2022 bullets. */
export const MASK = '\u2022'.repeat(8)

type Json = Record<string, unknown>

/**
 * Where each operation keeps its credentials (dot paths into its config); a registry entry, not a branch.
 * Besides these, every header of a step's `headers` whose name carries a credential (isCredentialHeader).
 */
export const credentialPaths: Readonly<Record<string, readonly string[]>> = {
  webhook_dispatch: ['secret'],
  // bearer: token; basic: password; api_key: token.
  http_request: ['auth.token', 'auth.password'],
}

export { credentialHeaderWords, isCredentialHeader } from '../../../lib/credential-headers.js'

/** The paths of a webhook trigger's config that hold credentials. */
const triggerCredentialPaths: Readonly<Record<string, readonly string[]>> = { webhook: ['secret'] }

// Every credential path of every operation: what an untyped config is masked with.
const allPaths = [...new Set(Object.values(credentialPaths).flat())]

/** What masking takes for a step: a key, a type and a config object. */
export interface StepLike {
  readonly key: string
  readonly type: string
  readonly config?: Json
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)
const isStep = (value: unknown): value is StepLike =>
  isObject(value) &&
  typeof value.key === 'string' &&
  typeof value.type === 'string' &&
  (value.config === undefined || isObject(value.config))

/**
 * A copy of a config with its credentials masked: the paths of `type` (every operation's paths when the
 * type is not given, e.g. a recorded input whose type the caller does not want to name), credential
 * headers (isCredentialHeader), and the same inside nested steps (a loop's `operations`, a switch's `cases[].steps`). Only non-empty strings are masked.
 */
export function maskCredentials(config: Json, type?: string): Json {
  const out = structuredClone(config)
  for (const path of type === undefined ? allPaths : (credentialPaths[type] ?? [])) maskAt(out, path.split('.'))
  if (isObject(out.headers)) {
    for (const name of Object.keys(out.headers)) if (isCredentialHeader(name)) maskValue(out.headers, name)
  }
  for (const [name, value] of Object.entries(out)) out[name] = maskNestedSteps(value)
  return out
}

/**
 * True when maskCredentials would change something in `config`: a credential path of `type` holding a
 * non-empty string, a credential header, or a nested step anywhere below. Walks without copying (and with
 * its own stack, so a deep resolved input costs no recursion): a run's step logs mask every step's input,
 * and most have nothing to mask, where structuredClone and rebuilding each object cost more than the step.
 */
export function needsMasking(config: Json, type?: string): boolean {
  for (const path of type === undefined ? allPaths : (credentialPaths[type] ?? [])) {
    let at: unknown = config
    for (const name of path.split('.')) at = isObject(at) ? at[name] : undefined
    if (typeof at === 'string' && at !== '') return true
  }
  if (isObject(config.headers) && Object.keys(config.headers).some(isCredentialHeader)) return true
  const stack: unknown[] = Object.values(config)
  while (stack.length > 0) {
    const value = stack.pop()
    if (Array.isArray(value)) {
      if (value.some(isStep)) return true
      for (const item of value) stack.push(item)
    } else if (isObject(value)) {
      for (const item of Object.values(value)) stack.push(item)
    }
  }
  return false
}

/** Nested steps anywhere below a config value: a loop's `operations`, a switch's `cases[].steps`. */
function maskNestedSteps(value: unknown): unknown {
  if (Array.isArray(value)) return value.some(isStep) ? maskSteps(value) : value.map(maskNestedSteps)
  if (isObject(value))
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, maskNestedSteps(item)]))
  return value
}

/** A copy of the steps with every credential masked (nested steps included). */
export function maskSteps<S>(steps: readonly S[]): S[] {
  return steps.map((step) =>
    isStep(step) ? ({ ...step, config: maskCredentials(step.config ?? {}, step.type) } as S) : step,
  )
}

/** A copy of a trigger config with its credentials masked (a webhook's secret). */
export function maskTriggerConfig(triggerType: string, config: Json): Json {
  const out = structuredClone(config)
  for (const path of triggerCredentialPaths[triggerType] ?? []) maskAt(out, path.split('.'))
  return out
}

/**
 * The incoming steps with every mask replaced by the stored value at the same path of the stored step
 * with the same key (nested steps included), or removed when nothing real is stored there (new flow, new
 * step, import elsewhere). Anything else sent is kept: a real value sets or rotates the credential.
 */
export function restoreMasked<S>(incoming: readonly S[], stored: readonly unknown[]): S[] {
  const storedByKey = new Map<string, StepLike>()
  collectSteps(stored, storedByKey)
  return restoreSteps(incoming, storedByKey)
}

/** A trigger config with masks restored from the stored config (same path), or removed. */
export function restoreMaskedTrigger(incoming: Json, stored: Json | null): Json {
  return restoreObject(incoming, stored) as Json
}

/** True when a mask appears anywhere in the value (tests, and callers that must refuse masks). */
export function containsMask(value: unknown): boolean {
  if (value === MASK) return true
  if (Array.isArray(value)) return value.some(containsMask)
  if (isObject(value)) return Object.values(value).some(containsMask)
  return false
}

function restoreSteps<S>(incoming: readonly S[], storedByKey: Map<string, StepLike>): S[] {
  return incoming.map((step) => {
    if (!isStep(step) || step.config === undefined) return step
    const config = restoreObject(step.config, storedByKey.get(step.key)?.config ?? null, storedByKey) as Json
    return { ...step, config } as S
  })
}

function restoreObject(incoming: unknown, stored: unknown, storedByKey?: Map<string, StepLike>): unknown {
  if (Array.isArray(incoming)) {
    if (storedByKey && incoming.some(isStep)) return restoreSteps(incoming, storedByKey)
    const out: unknown[] = []
    for (const [i, item] of incoming.entries()) {
      const previous = Array.isArray(stored) ? stored[i] : undefined
      if (item !== MASK) out.push(restoreObject(item, previous, storedByKey))
      else if (typeof previous === 'string' && previous !== MASK && previous !== '') out.push(previous)
    }
    return out
  }
  if (!isObject(incoming)) return incoming
  const out: Json = {}
  for (const [name, value] of Object.entries(incoming)) {
    const previous = isObject(stored) ? stored[name] : undefined
    if (value === MASK) {
      if (typeof previous === 'string' && previous !== MASK && previous !== '') out[name] = previous
      continue
    }
    out[name] = restoreObject(value, previous, storedByKey)
  }
  return out
}

function collectSteps(steps: readonly unknown[], into: Map<string, StepLike>): void {
  forEachStep(steps, (step) => into.set(step.key, step))
}

/** Calls `visit` for every step of the list and every step nested in their configs (a loop's `operations`, a switch's `cases[].steps`), parents first. */
export function forEachStep(steps: readonly unknown[], visit: (step: StepLike) => void): void {
  for (const step of steps) {
    if (!isStep(step)) continue
    visit(step)
    for (const value of Object.values(step.config ?? {})) forEachNested(value, visit)
  }
}

/** Steps anywhere below a config value (a switch's `cases[].steps` sit one object down). */
function forEachNested(value: unknown, visit: (step: StepLike) => void): void {
  if (Array.isArray(value)) {
    if (value.some(isStep)) forEachStep(value, visit)
    else for (const item of value) forEachNested(item, visit)
  } else if (isObject(value)) {
    for (const item of Object.values(value)) forEachNested(item, visit)
  }
}

function maskAt(target: Json, path: readonly string[]): void {
  const [head, ...rest] = path
  if (head === undefined) return
  if (rest.length === 0) return maskValue(target, head)
  const next = target[head]
  if (isObject(next)) maskAt(next, rest)
}

function maskValue(target: Json, name: string): void {
  const value = target[name]
  if (typeof value === 'string' && value !== '') target[name] = MASK
}
