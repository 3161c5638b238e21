import type { z } from 'zod'
import { AppError } from '../../../lib/errors.js'
import type { OperationRegistry } from '../../operations/index.js'
import type { Step, TriggerType } from '../model.js'
import { triggerDefinition } from '../triggers/registry.js'
import { isCredentialPath } from './missing-credentials.js'

/** Parses a service input with its schema; throws validation_error (422) naming the first bad path and listing every issue. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, at = ''): z.output<S> {
  const result = schema.safeParse(input)
  if (result.success) return result.data
  throw invalid(result.error, at)
}

/**
 * The save-time check of a draft: the trigger config against its type's schema (defaults filled in), the
 * steps through the operations registry (types exist, keys unique, configs fit, templates parse, rule
 * trees valid). A credential may be missing (a draft's missingCredentials; publishing needs it). Returns
 * the trigger config as stored. Throws validation_error (422) naming the path.
 */
export function checkDraft(
  operations: OperationRegistry,
  triggerType: TriggerType,
  triggerConfig: Record<string, unknown>,
  steps: readonly Step[],
): Record<string, unknown> {
  const config = parseInput(triggerDefinition(triggerType).configSchema, triggerConfig, 'triggerConfig') as Record<
    string,
    unknown
  >
  operations.checkSteps(steps, { missingAllowed: isCredentialPath })
  return config
}

function invalid(error: z.ZodError, at: string): AppError {
  const issues = error.issues.map((i) => ({
    path: [at, ...i.path.map(String)].filter((p) => p !== '').join('.'),
    message: i.message,
  }))
  const first = issues[0] ?? { path: at, message: 'invalid' }
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''
  return new AppError('validation_error', `${first.path || 'body'}: ${first.message}${more}`, { issues })
}
