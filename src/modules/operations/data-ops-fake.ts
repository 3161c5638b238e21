import type { Principal } from '../../lib/principal.js'
import type { DataServices } from './data-ops.js'
import { testServices } from './test-context.js'

/** One call a data operation made on the fake services: method, principal, collection, the rest. */
export interface DataCall {
  readonly method: string
  readonly principal: Principal
  readonly collection: string
  readonly args: unknown[]
}

/**
 * Records services for unit tests of the data operations: every call is recorded; each method answers
 * what `answers` gives for it (default: an echo), or throws what it throws.
 */
export function fakeDataServices(
  answers: Partial<
    Record<
      'create' | 'update' | 'delete' | 'find' | 'matchingIds' | 'aggregate' | 'bulkDelete',
      (...args: any[]) => unknown
    >
  > = {},
) {
  const calls: DataCall[] = []
  let seq = 0
  const called =
    (method: string, fallback: (...args: any[]) => unknown) =>
    async (principal: Principal, collection: string, ...args: unknown[]) => {
      calls.push({ method, principal, collection, args })
      return (answers[method as keyof typeof answers] ?? fallback)(...args)
    }
  const services: DataServices = {
    records: {
      create: called('create', (body: Record<string, unknown>) => ({ id: `r${++seq}`, ...body })) as never,
      update: called('update', (id: string, body: Record<string, unknown>) => ({ id, ...body })) as never,
      delete: called('delete', () => undefined) as never,
      find: called('find', () => ({ data: [], hasMore: false })) as never,
      matchingIds: called('matchingIds', (_action: string, target: { ids?: string[] }) => target.ids ?? []) as never,
      aggregate: called('aggregate', () => ({ data: [], hasMore: false })) as never,
    },
    dataTools: { bulk: { delete: called('bulkDelete', (ids: string[]) => ids.length) as never } },
  }
  return { services: testServices(services), calls }
}
