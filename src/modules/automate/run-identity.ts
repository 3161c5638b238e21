import type { Principal } from '../../lib/principal.js'
import type { RunAs, TriggerType } from './model.js'

/**
 * Who a run of a published flow acts as, for every trigger and runAs: the one place this is decided
 * (decision 045; the table is in docs/permissions.md "Flows that act for someone"). The publisher is whoever
 * made the published version the one that runs (publish or rollback); they took responsibility for what
 * the flow does, so no run reaches beyond them:
 *
 * - `triggering_user`, started by a person or an API key (manual, api_endpoint, an event they caused):
 *   that caller, never beyond the publisher (`capped`);
 * - `triggering_user`, started by nobody (a webhook, a public api_endpoint): the anonymous caller (the
 *   `public` role), never beyond the publisher;
 * - `triggering_user`, started by a schedule or by Plinth itself (a system flow's write): the publisher;
 * - `flow_owner`: the flow's creator; `role:<id>`: the triggering person or key holding that role (a key
 *   within its capabilities), else the publisher holding it. Both are delegations: the publisher must still
 *   be able to set them when a run starts (else `delegation_revoked`), and they are not capped;
 * - a system-managed flow acts as the system.
 */
export type RunIdentity =
  | { readonly who: 'system' }
  | { readonly who: 'initiator'; readonly capped: true }
  | { readonly who: 'anonymous'; readonly capped: true }
  | { readonly who: 'publisher' }
  | { readonly who: 'owner'; readonly delegated: true }
  | { readonly who: 'initiator_with_role'; readonly roleId: string; readonly delegated: true }
  | { readonly who: 'publisher_with_role'; readonly roleId: string; readonly delegated: true }

/** The identity a run takes (see RunIdentity). `initiator`: who set the run off; null for webhooks and schedules. */
export function runIdentity(
  systemFlow: boolean,
  runAs: RunAs,
  trigger: TriggerType,
  initiator: Principal | null,
): RunIdentity {
  if (systemFlow) return { who: 'system' }
  // Work Plinth starts itself may do anything in the project: it never lends a flow that reach.
  const starter = initiator && initiator.kind !== 'system' ? initiator : null
  if (runAs === 'flow_owner') return { who: 'owner', delegated: true }
  if (runAs !== 'triggering_user') {
    const roleId = runAs.slice('role:'.length)
    // A person, or a key of one, holds the role; a service key (nobody) and the anonymous caller leave it to the publisher.
    const person = starter !== null && starter.kind !== 'anonymous' && starter.userId !== null
    return person
      ? { who: 'initiator_with_role', roleId, delegated: true }
      : { who: 'publisher_with_role', roleId, delegated: true }
  }
  if (starter) return { who: 'initiator', capped: true }
  if (trigger === 'schedule' || initiator?.kind === 'system') return { who: 'publisher' }
  return { who: 'anonymous', capped: true }
}

/** A flow's publisher as `flows.published_by` stores it: the person's id, or `key:<id>` for an API key (which then bounds the flow). */
export function publisherRef(actor: Principal): string | null {
  if (actor.kind === 'api_key' && actor.apiKeyId !== null) return `key:${actor.apiKeyId}`
  return actor.kind === 'user' ? actor.userId : null
}
