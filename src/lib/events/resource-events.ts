import type { Clock } from '../clock.js'
import type { Principal } from '../principal.js'
import type { EventBus } from './bus.js'
import { principalSnapshot, type PrincipalSnapshot } from './principal-snapshot.js'

/**
 * `<kind>.create | .update | .delete` of a project resource (the builder resources: views, navigation
 * items, renderers, lens attachments, containers; docs/events.md): the resource as its GET answers it
 * before and after the write (null on the side where it did not exist).
 */
export interface ResourceEvent<T> {
  projectId: string
  id: string
  before: T | null
  after: T | null
  principal: PrincipalSnapshot
  at: number
}

export type ResourceEvents<Kind extends string, T> = {
  [A in 'create' | 'update' | 'delete' as `${Kind}.${A}`]: ResourceEvent<T>
}

/** Publishes a committed write of one resource; the event's name follows from which side is null. */
export type ResourcePublisher<T> = (actor: Principal, id: string, before: T | null, after: T | null) => void

export function resourcePublisher<Kind extends string, T>(
  events: EventBus<ResourceEvents<Kind, T>> | undefined,
  kind: Kind,
  clock: Clock,
): ResourcePublisher<T> {
  return (actor, id, before, after) => {
    if (!events || (before === null && after === null)) return
    const action = before === null ? 'create' : after === null ? 'delete' : 'update'
    // The mapped type cannot be indexed by a computed name; the bus is typed by it at every subscriber.
    const bus = events as unknown as EventBus<Record<string, ResourceEvent<T>>>
    const event: ResourceEvent<T> = {
      projectId: actor.projectId,
      id,
      before,
      after,
      principal: principalSnapshot(actor),
      at: clock.seconds(),
    }
    bus.emit(`${kind}.${action}`, event)
  }
}
