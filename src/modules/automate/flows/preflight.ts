import { principals, type Principal } from '../../../lib/principal.js'
import type { AccessService } from '../../access/index.js'
import type { OperationNeed, OperationRegistry, StepNeed } from '../../operations/index.js'
import type { FlowDefinition } from '../model.js'
import { publisherPrincipal, type PublisherSources } from '../publisher.js'

/**
 * The flow preflight (decision 053): before a published flow runs, each step's needs (registry.needsOf)
 * are checked against whom its runs will act as (run-identity.ts) and the collections they name against the
 * project. It warns, never refuses: a grant may be added later, a collection created after an import, and
 * whoever sets a `triggering_user` run off is unknown ahead.
 */

export const preflightCodes = [
  'permission_missing',
  'publisher_permission_missing',
  'runs_as_unknown',
  'collection_missing',
] as const
export type PreflightCode = (typeof preflightCodes)[number]

/** One thing a run of the flow would likely fail on, with what to do about it. */
export interface FlowWarning {
  readonly code: PreflightCode
  /** The step's key (nested steps included) and its operation type. */
  readonly step: string
  readonly type: string
  /** The permission the step needs, `collections/notes:create` or `system/files:create`. */
  readonly permission: string
  /** The collection it names, when it names one. */
  readonly collection: string | null
  /** Whom the runs act as, in words (`the anonymous caller (role public)`). */
  readonly runsAs: string
  readonly message: string
  readonly fix: string
}

/** The most warnings one answer carries (a flow holds up to 500 steps). */
export const maxWarnings = 50

export interface PreflightDeps {
  readonly access: Pick<AccessService, 'decide' | 'roleById'>
  readonly operations: Pick<OperationRegistry, 'needsOf'>
  /** A collection of the project by name, or null (collections.find). */
  findCollection(
    projectId: string,
    name: string,
  ): Promise<{ readonly accessControl?: { readonly preset?: string } | null } | null>
  /** Accounts, roles and keys as they are now, to rebuild the publisher and the owner. */
  readonly sources: PublisherSources
}

/** What a preflight reads of a flow: its published definition, its creator and its publisher. */
export interface PreflightFlow {
  readonly projectId: string
  readonly definition: FlowDefinition
  readonly createdBy: string | null
  readonly publishedBy: string | null
  readonly system: boolean
}

/** Whom a check is made against, and what a refusal is called. */
interface Subject {
  readonly principal: Principal
  readonly code: 'permission_missing' | 'publisher_permission_missing'
  readonly runsAs: string
  /** Why it acts so, said after a refusal. */
  readonly why?: string
  fix(permission: string): string
}

/** A principal holding `roleId` in the project, as a run holding a delegated role acts (its grants decide). */
function holderOf(
  projectId: string,
  userId: string,
  role: { id: string; name: string },
  homeProjectId = projectId,
): Principal {
  return principals.capability({
    homeProjectId,
    projectId,
    userId,
    roleId: role.id,
    roleName: role.name,
    superAdmin: role.name === 'super_admin',
  })
}

export type Preflight = ReturnType<typeof createPreflight>

export function createPreflight(deps: PreflightDeps) {
  const { access, sources } = deps

  /** Whether `principal` may do what `need` says (a public collection is readable by anyone). */
  async function allows(principal: Principal, need: OperationNeed, preset: string | undefined): Promise<boolean> {
    if ('resource' in need) return (await access.decide(principal, need.resource, need.action)).allowed
    if (need.action === 'read' && preset === 'public') return true
    return (await access.decide(principal, `collections/${need.collection}`, need.action)).allowed
  }

  /** The flow owner as flow_owner runs act, or null when the account can no longer act. */
  async function ownerOf(flow: PreflightFlow): Promise<Principal | null> {
    const owner = flow.createdBy === null ? null : await sources.findRow(flow.createdBy)
    const role = owner && !owner.banned ? await sources.roleById(owner.project_id, owner.role_id) : null
    return owner && role ? holderOf(flow.projectId, owner.id, role, owner.project_id) : null
  }

  /**
   * Who runs act as, for the checks: `acting` is checked when it is known ahead, `ceiling` (the publisher,
   * whom a triggering_user run never exceeds) too; `unknown` says whom it depends on. Null subjects with a
   * reason: the identity cannot act at all (activation or the run says so itself).
   */
  async function subjectsOf(
    flow: PreflightFlow,
    publisher: Principal | null,
  ): Promise<{ acting: Subject | null; ceiling: Subject | null; unknown: string | null }> {
    const { runAs, triggerType, triggerConfig } = flow.definition
    const viaRunAs = (perm: string) =>
      `set runAs to a role holding ${perm} (PATCH /flows/:id { "runAs": "role:<id>" }, which needs system/automate:manage), or to flow_owner`
    if (runAs === 'flow_owner') {
      const owner = await ownerOf(flow)
      if (!owner) return { acting: null, ceiling: null, unknown: 'the flow owner, whose account can no longer act' }
      const role = owner.roleName
      return {
        acting: {
          principal: owner,
          code: 'permission_missing',
          runsAs: `the flow owner (role ${role})`,
          fix: (perm) => `grant ${perm} to the role ${role}, or set runAs to a role that holds it`,
        },
        ceiling: null,
        unknown: null,
      }
    }
    if (runAs !== 'triggering_user') {
      const role = await access.roleById(flow.projectId, runAs.slice('role:'.length))
      if (!role) return { acting: null, ceiling: null, unknown: `${runAs}, a role that no longer exists` }
      const holder = holderOf(flow.projectId, publisher?.userId ?? '', role)
      return {
        acting: {
          principal: holder,
          code: 'permission_missing',
          runsAs: `the role ${role.name} (runAs ${runAs})`,
          fix: (perm) => `grant ${perm} to the role ${role.name}, or set runAs to a role that holds it`,
        },
        ceiling: null,
        unknown: null,
      }
    }
    const ceiling: Subject | null = publisher && {
      principal: publisher,
      code: 'publisher_permission_missing',
      runsAs: `within its publisher (${publisher.userId ?? publisher.apiKeyId ?? 'a key'})`,
      fix: (perm) => `publish the flow as someone who holds ${perm}, or grant ${perm} to the publisher's role`,
    }
    // A webhook, and an api_endpoint open to anonymous calls, run as the anonymous caller: the least-privilege public role.
    if (triggerType === 'webhook' || (triggerType === 'api_endpoint' && triggerConfig.require_auth === false)) {
      const acting: Subject = {
        principal: principals.anonymous(flow.projectId),
        code: 'permission_missing',
        runsAs: 'the anonymous caller (role public)',
        why:
          triggerType === 'webhook'
            ? 'a webhook run acts for nobody, so by default it holds only what the public role holds'
            : 'a call without credentials acts for nobody',
        fix: (perm) => `${viaRunAs(perm)}; granting ${perm} to the public role would let anyone do it`,
      }
      return { acting, ceiling, unknown: null }
    }
    // A schedule acts as its publisher.
    if (triggerType === 'schedule')
      return {
        acting: ceiling && { ...ceiling, runsAs: 'its publisher (a schedule acts as whoever published it)' },
        ceiling: null,
        unknown: null,
      }
    const who =
      triggerType === 'manual' || triggerType === 'api_endpoint'
        ? 'whoever sets it off'
        : triggerType === 'another_flow'
          ? 'whom the calling run acts as'
          : 'whoever caused the event'
    return { acting: null, ceiling, unknown: `${who} (runAs triggering_user)` }
  }

  /**
   * The warnings for a flow's published definition, at most maxWarnings, in step order: collection_missing,
   * then for each need what the acting identity, the publisher (as ceiling) or nobody known ahead lacks.
   * None for a system-managed flow (it acts as the system).
   */
  async function check(flow: PreflightFlow): Promise<FlowWarning[]> {
    if (flow.system) return []
    const needs = deps.operations.needsOf([...flow.definition.operations])
    if (needs.length === 0) return []
    const publisher = await publisherPrincipal(sources, flow.projectId, flow.publishedBy)
    const { acting, ceiling, unknown } = await subjectsOf(flow, publisher)
    const out: FlowWarning[] = []
    const presets = new Map<string, { preset: string | undefined } | null>()
    for (const stepNeed of needs) {
      if (out.length >= maxWarnings) break
      const { need } = stepNeed
      const permission =
        'resource' in need ? `${need.resource}:${need.action}` : `collections/${need.collection}:${need.action}`
      const collection = 'collection' in need ? need.collection : null
      const base = { step: stepNeed.step, type: stepNeed.type, permission, collection }
      let preset: string | undefined
      if (collection !== null) {
        if (!presets.has(collection)) {
          const found = await deps.findCollection(flow.projectId, collection)
          presets.set(collection, found && { preset: found.accessControl?.preset })
        }
        const known = presets.get(collection)
        if (!known) {
          out.push({
            ...base,
            code: 'collection_missing',
            runsAs: acting?.runsAs ?? unknown ?? '',
            message: `Step '${stepNeed.step}' (${stepNeed.type}) uses the collection ${collection}, which this project does not have`,
            fix: `create the collection ${collection} (an imported flow brings no collections), or change the step`,
          })
          continue
        }
        preset = known.preset
      }
      const lacking = await firstLacking(stepNeed, [acting, ceiling], preset)
      if (lacking) {
        out.push({
          ...base,
          code: lacking.code,
          runsAs: lacking.runsAs,
          message: refusal(stepNeed, permission, lacking),
          fix: lacking.fix(permission),
        })
      } else if (unknown !== null) {
        out.push({
          ...base,
          code: 'runs_as_unknown',
          runsAs: unknown,
          message: `Step '${stepNeed.step}' (${stepNeed.type}) needs ${permission}; its runs act as ${unknown}, unknown ahead: a run by someone without it fails`,
          fix: `make sure whoever runs it holds ${permission}, or set runAs to a role that holds it`,
        })
      }
    }
    return out
  }

  async function firstLacking(
    stepNeed: StepNeed,
    subjects: readonly (Subject | null)[],
    preset: string | undefined,
  ): Promise<Subject | null> {
    for (const subject of subjects)
      if (subject && !(await allows(subject.principal, stepNeed.need, preset))) return subject
    return null
  }

  return { check }
}

function refusal(stepNeed: StepNeed, permission: string, subject: Subject): string {
  const step = `Step '${stepNeed.step}' (${stepNeed.type}) needs ${permission}`
  if (subject.code === 'publisher_permission_missing')
    return `${step}, which the flow's publisher lacks: its runs never act beyond the publisher, so it fails`
  return `${step}, which ${subject.runsAs} lacks${subject.why ? ` (${subject.why})` : ''}: every run fails at this step`
}
