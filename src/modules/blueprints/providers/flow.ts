import { z } from 'zod'
import { AppError, isAppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import type { AccessService } from '../../access/index.js'
import {
  flowCreateShape,
  flowDesiredShape,
  maskSteps,
  maskTriggerConfig,
  type Flow,
  type FlowsService,
} from '../../automate/index.js'
import { resourceProvider, type BrickProvider, type Finding, type ProposedCall } from './provider.js'

type Json = Record<string, unknown>

export interface FlowServices {
  automate: FlowsService
  /** Role names ↔ ids (a brick names a role; a flow stores its id) and the manage check of PATCH /flows/:id. */
  access: Pick<AccessService, 'authorize' | 'roleById' | 'roleByName'>
}

/**
 * Who a flow brick's runs act as: as PATCH /automate/flows/:id takes it, but a role by its name (a role's id
 * is the instance's own). Absent is triggering_user, which is never written into the shape, so a flow that
 * delegates nothing compares as it did before runAs existed.
 */
const BrickRunAsSchema = z.union([
  z.literal('triggering_user'),
  z.literal('flow_owner'),
  z.string().regex(/^role:[a-z][a-z0-9_-]{1,49}$/, 'must be triggering_user, flow_owner or role:<role name>'),
])

const route = '/api/v1/automate/flows'

/** The desired shape without runAs: the create route's body (which refuses runAs). */
const withoutRunAs = ({ runAs: _runAs, ...rest }: Json): Json => rest

/** runAs as a client sends it: a role by `${role:<name>}`, which it resolves to the id (GET /roles). */
const clientRunAs = (runAs: unknown) => {
  const text = String(runAs ?? 'triggering_user')
  return text.startsWith('role:') ? `role:\${role:${text.slice('role:'.length)}}` : text
}

/**
 * flow bricks (decision 069): the create body of POST /automate/flows plus an optional runAs, set after the
 * create by the flow service's update (the same check as PATCH /flows/:id: flow_owner and role:<name> need
 * system/automate:manage and a role within the installer's reach). A flow installs as a draft.
 */
export function flowProvider(s: FlowServices): BrickProvider {
  /** The flow with runAs naming its role by name (a role gone keeps its id: it compares as changed). */
  async function named(actor: Principal, flow: Flow): Promise<Flow> {
    if (!flow.runAs.startsWith('role:')) return flow
    const role = await s.access.roleById(actor.projectId, flow.runAs.slice('role:'.length))
    return role ? { ...flow, runAs: `role:${role.name}` } : flow
  }

  /** runAs as the flow service takes it: a role by its id. Throws validation_error for a role not there. */
  async function stored(actor: Principal, runAs: unknown): Promise<string> {
    const text = String(runAs ?? 'triggering_user')
    if (!text.startsWith('role:')) return text
    const name = text.slice('role:'.length)
    const role = await s.access.roleByName(actor.projectId, name)
    if (!role)
      throw new AppError('validation_error', `runAs: no role named ${name} in this project`, { field: 'runAs' })
    return `role:${role.id}`
  }

  /**
   * spec: flow.run_as_not_delegable. Whether the installer could set the brick's runAs as PATCH /flows/:id
   * checks it: system/automate:manage, and a role it could assign (the roles it may delegate to). The owner
   * of a flow the install makes is the installer; a role not there yet is checked when applied (a warning).
   */
  async function delegation(actor: Principal, desired: Json): Promise<Finding | null> {
    const runAs = desired.runAs
    if (runAs === undefined) return null
    const refused = (message: string): Finding => ({ code: 'flow.run_as_not_delegable', message })
    try {
      await s.access.authorize(actor, 'system/automate:manage')
    } catch (err) {
      if (isAppError(err) && err.code === 'forbidden')
        return refused(`runAs ${String(runAs)} needs system/automate:manage, which you lack`)
      throw err
    }
    if (runAs === 'flow_owner') return null
    const name = String(runAs).slice('role:'.length)
    const role = await s.access.roleByName(actor.projectId, name)
    if (!role) return null // checked when applied (lateRole)
    const reach = await s.automate.assignableRoles(actor)
    return reach.some((r) => r.id === role.id)
      ? null
      : refused(`You may not delegate the flow's runs to the role ${name}, which holds more than you do`)
  }

  /** A role the brick delegates to that is not there yet (an earlier brick makes it): checked when applied. */
  async function lateRole(actor: Principal, desired: Json): Promise<Finding[]> {
    const runAs = desired.runAs
    if (typeof runAs !== 'string' || !runAs.startsWith('role:')) return []
    const name = runAs.slice('role:'.length)
    if (await s.access.roleByName(actor.projectId, name)) return []
    return [
      {
        code: 'flow.run_as_checked_at_apply',
        message: `The role ${name} is not there yet (an earlier brick is to make it): whether you may delegate to it is checked when the flow is applied`,
      },
    ]
  }

  const base = resourceProvider<Flow, unknown, unknown>({
    kind: 'flow',
    route,
    // The flow service parses its own bodies; the desired shape fills the trigger's defaults as a save does.
    createSchema: z.unknown(),
    updateSchema: z.unknown(),
    desiredOf(body) {
      const { runAs, ...rest } = (body !== null && typeof body === 'object' ? body : {}) as Json
      const parsed = BrickRunAsSchema.optional().safeParse(runAs)
      if (!parsed.success)
        throw new AppError('validation_error', `runAs: ${parsed.error.issues[0]!.message}`, {
          issues: [{ path: 'runAs', message: parsed.error.issues[0]!.message }],
        })
      const desired = flowDesiredShape(body === null || typeof body !== 'object' ? body : rest)
      return parsed.data === undefined || parsed.data === 'triggering_user'
        ? desired
        : { ...desired, runAs: parsed.data }
    },
    shape: (flow) => ({
      ...flowCreateShape(flow as unknown as Json),
      ...(flow.runAs === 'triggering_user' ? {} : { runAs: flow.runAs }),
    }),
    key: ['name'],
    idOf: (flow) => flow.id,
    all: async (actor) => Promise.all((await s.automate.list(actor)).map((flow) => named(actor, flow))),
    get: async (actor, id) => named(actor, await s.automate.get(actor, id)),
    // Made as a draft, then delegated by the update (the create route refuses runAs); a delegation the
    // update refuses takes the new flow away again, so a refused install leaves nothing half made.
    async create(actor, input) {
      const desired = input as Json
      const refusal = await delegation(actor, desired)
      if (refusal) throw new AppError('forbidden', refusal.message, { field: 'runAs' })
      const flow = await s.automate.create(actor, withoutRunAs(desired))
      if (desired.runAs === undefined) return flow
      try {
        return named(actor, await s.automate.update(actor, flow.id, { runAs: await stored(actor, desired.runAs) }))
      } catch (err) {
        await s.automate.delete(actor, flow.id).catch(() => undefined)
        throw err
      }
    },
    // runAs always sent: a brick without one brings a delegated flow back to triggering_user.
    update: async (actor, id, input) => {
      const desired = input as Json
      const body = { ...withoutRunAs(desired), runAs: await stored(actor, desired.runAs) }
      return named(actor, await s.automate.update(actor, id, body))
    },
    remove: (actor, id) => s.automate.delete(actor, id),
    check: delegation,
    warnings: (actor, desired) => lateRole(actor, desired),
    // Credentials compare as whether one is held, as a webhook's secret: a reader without
    // system/automate:update sees masks, and an export writes them as secret parameters.
    comparable: (shape) => ({
      ...shape,
      triggerConfig: maskTriggerConfig(String(shape.triggerType), (shape.triggerConfig ?? {}) as Json),
      operations: maskSteps((shape.operations ?? []) as unknown[]),
    }),
  })
  return {
    ...base,
    // A new flow is created, then delegated by a PATCH naming it `${flow:<name>}` (its id is known once made).
    calls(desired, live): ProposedCall[] {
      if (live !== null)
        return [
          {
            method: 'PATCH',
            path: `${route}/${encodeURIComponent(live.ref)}`,
            body: { ...withoutRunAs(desired), runAs: clientRunAs(desired.runAs) },
          },
        ]
      const create: ProposedCall = { method: 'POST', path: route, body: withoutRunAs(desired) }
      if (desired.runAs === undefined) return [create]
      const path = `${route}/\${flow:${String(desired.name)}}`
      return [create, { method: 'PATCH', path, body: { runAs: clientRunAs(desired.runAs) } }]
    },
  }
}
