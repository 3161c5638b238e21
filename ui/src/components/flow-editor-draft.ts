import { locate, type FlowDetail, type FlowProblem, type Step, type TriggerType } from './flow-api.js'
import type { FieldErrors } from './schema-form.js'

export interface Draft {
  name: string
  triggerType: TriggerType
  triggerConfig: Record<string, unknown>
  options: Record<string, unknown>
  runAs: string
  /** Steps with a local id, so a card keeps its state when steps move. */
  steps: { uid: number; step: Step }[]
}

let uids = 0
/** A fresh local id for a step of the draft. */
export const nextUid = () => ++uids
export const draftOf = (flow: FlowDetail): Draft => ({
  name: flow.name,
  triggerType: flow.triggerType,
  triggerConfig: flow.triggerConfig,
  options: flow.options,
  runAs: flow.runAs,
  steps: flow.operations.map((step) => ({ uid: ++uids, step })),
})

/** The PATCH body; runAs only when it changed (changing it needs system/automate:manage). */
export const bodyOf = (draft: Draft, stored: FlowDetail) => ({
  ...(draft.runAs !== stored.runAs ? { runAs: draft.runAs } : {}),
  name: draft.name,
  triggerType: draft.triggerType,
  triggerConfig: draft.triggerConfig,
  options: draft.options,
  operations: draft.steps.map((s) => s.step),
})

/** What `$trigger` holds for each trigger type (docs/automation-triggers.md). */
export function triggerVariables(type: TriggerType, config: Record<string, unknown>): string[] {
  const vars = ['{{$trigger.body}}']
  switch (type) {
    case 'manual': {
      const fields = Array.isArray(config.input_fields) ? (config.input_fields as { name?: unknown }[]) : []
      for (const f of fields) if (typeof f.name === 'string' && f.name) vars.push(`{{$trigger.body.input.${f.name}}}`)
      vars.push('{{$trigger.body.ids}}', '{{$trigger.body.collection}}')
      break
    }
    case 'webhook':
    case 'api_endpoint':
      vars.push('{{$trigger.body.<field>}}', '{{$trigger.method}}')
      break
    case 'event_action':
      vars.push('{{$trigger.event}}', '{{$trigger.collection}}', '{{$trigger.body.after}}', '{{$trigger.body.before}}')
      break
    case 'event_filter':
      vars.push('{{$trigger.event}}', '{{$trigger.collection}}', '{{$trigger.body.data}}', '{{$trigger.body.before}}')
      break
    case 'schedule':
      vars.push('{{$trigger.body.scheduledAt}}')
      break
    case 'app_event':
      vars.push('{{$trigger.event}}')
      break
    case 'another_flow':
      vars.push('{{$trigger.body.<field>}}', '{{$trigger.chain}}')
      break
  }
  return vars
}

export const runVariables = [
  '{{$user.id}}',
  '{{$user.email}}',
  '{{$flow.id}}',
  '{{$run.id}}',
  '{{$now}}',
  '{{= <JSONata> }}',
]

/** Where each issue of a refusal belongs: a step's config field or setting, the trigger, or the flow. */
export function spread(problem: FlowProblem | null) {
  const steps = new Map<number, { message: string; config: Record<string, string>; other: Record<string, string> }>()
  const trigger: Record<string, string> = {}
  const flow: Record<string, string> = {}
  if (!problem) return { steps, trigger, flow }
  const issues = problem.issues.length
    ? problem.issues
    : problem.path
      ? [{ path: problem.path, message: problem.message }]
      : []
  for (const issue of issues) {
    const at = locate(issue.path)
    if (!at) continue
    if (at.kind === 'step') {
      const entry = steps.get(at.index) ?? { message: problem.message, config: {}, other: {} }
      if (at.config !== null) entry.config[at.config] = issue.message
      else if (at.rest) entry.other[at.rest.replace(/^config$/, '')] = issue.message
      steps.set(at.index, entry)
    } else if (at.kind === 'trigger') trigger[at.config] = issue.message
    // Activating a schedule checks its published pattern and zone (details.field pattern or timezone).
    else if (at.field === 'pattern') trigger.cron = issue.message
    else if (at.field === 'timezone') trigger.timezone = issue.message
    else flow[at.field] = issue.message
  }
  return { steps, trigger, flow }
}

export function prefixed(errors: Record<string, string>, prefix: string): FieldErrors {
  return Object.fromEntries(
    Object.entries(errors)
      .filter(([p]) => p.startsWith(prefix))
      .map(([p, m]) => [p.slice(prefix.length), m]),
  )
}
