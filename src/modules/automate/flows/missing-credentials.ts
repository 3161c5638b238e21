import type { OperationRegistry } from '../../operations/index.js'
import { credentialPaths, forEachStep } from './masking.js'

/**
 * Credentials a draft still lacks (decision 052). A mask sent with nothing stored behind it (an import
 * into another project, a copy) is dropped, so a step whose schema requires that credential could not be
 * saved; instead a draft may lack a credential, the flow detail names each one (`missingCredentials`) and
 * publishing is refused (422) until it is given.
 */

/** A credential the draft lacks: the step's key (null for the trigger) and the path under it that needs a value. */
export interface MissingCredential {
  readonly step: string | null
  readonly path: string
}

/** True when `path` of a `type` step's config is one of its credentials (credentialPaths): what a draft may lack. */
export function isCredentialPath(type: string, path: readonly (string | number)[]): boolean {
  return (credentialPaths[type] ?? []).includes(path.join('.'))
}

/** Trigger configs that need a credential: a webhook that requires auth needs its secret. */
const triggerNeeds: Readonly<Record<string, (config: Record<string, unknown>) => string[]>> = {
  webhook: (config) => (config.require_auth === true && !hasText(config.secret) ? ['secret'] : []),
}

/**
 * The credentials the draft lacks: each step's (nested steps included) whose schema requires a value at
 * one of its credential paths where the config has none, then the trigger's. Read-only; never throws.
 */
export function missingCredentials(
  operations: Pick<OperationRegistry, 'get'>,
  draft: {
    readonly triggerType: string
    readonly triggerConfig: Record<string, unknown>
    readonly operations: readonly unknown[]
  },
): MissingCredential[] {
  const missing: MissingCredential[] = []
  forEachStep(draft.operations, (step) => {
    const definition = operations.get(step.type)
    if (!definition || !credentialPaths[step.type]) return
    const config = step.config ?? {}
    const parsed = definition.configSchema.safeParse(config)
    if (parsed.success) return
    for (const issue of parsed.error.issues) {
      const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol')
      if (issue.code === 'invalid_type' && valueAt(config, path) === undefined && isCredentialPath(step.type, path)) {
        missing.push({ step: step.key, path: ['config', ...path].join('.') })
      }
    }
  })
  for (const name of triggerNeeds[draft.triggerType]?.(draft.triggerConfig) ?? [])
    missing.push({ step: null, path: `triggerConfig.${name}` })
  return missing
}

/** Where each missing credential is, as the issues of a validation_error name paths. */
export function describeMissing(missing: readonly MissingCredential[]): { path: string; message: string }[] {
  return missing.map((m) => ({
    path: m.step === null ? m.path : `step '${m.step}' ${m.path}`,
    message: 'needs a value: the credential was not given (masked values are dropped where nothing is stored)',
  }))
}

const hasText = (value: unknown): boolean => typeof value === 'string' && value !== ''

function valueAt(config: unknown, path: readonly (string | number)[]): unknown {
  let value = config
  for (const part of path) {
    if (typeof value !== 'object' || value === null) return undefined
    value = (value as Record<string | number, unknown>)[part]
  }
  return value
}
