// Type-level checks of the SDK's typed records, compiled by the root typecheck (npm run typecheck) and never run.
// Each `@ts-expect-error` line must fail to compile: were the error to disappear (a filter no longer typed),
// tsc would report the directive as unused and the typecheck would fail.
import { createClient, type ApiOperations, type ApiSchemas, type Filter } from '@plinth/client'
import type { Collections, Ticket } from './collections.fixture.js'

const client = createClient<Collections>({ url: 'http://127.0.0.1:8090' })
const tickets = client.collection('tickets')

export async function typedFilters(): Promise<void> {
  // Accepted: shorthand, operators of the field's type, variables, JSON paths, _and/_or, system columns.
  await tickets.list({ filter: { status: 'open', priority: { _gte: 3, _lt: 10 } } })
  await tickets.list({ filter: { _or: [{ done: true }, { title: { _starts_with: 'Login' } }] } })
  await tickets.list({ filter: { created_at: { _gt: '$NOW' }, tags: { _contains: 'bug' }, 'meta.area': 'auth' } })
  await tickets.list({ filter: { priority: null, due: { _null: true } }, sortBy: '-priority', fields: ['title'] })

  // @ts-expect-error a field the record does not have
  await tickets.list({ filter: { titel: 'Login fails' } })
  // @ts-expect-error a wrong field name inside _or
  await tickets.list({ filter: { _or: [{ done: true }, { priorty: 1 }] } })
  // @ts-expect-error a value of the wrong type (priority is a number)
  await tickets.list({ filter: { priority: 'high' } })
  // @ts-expect-error an operator value of the wrong type
  await tickets.list({ filter: { priority: { _gte: '3' } } })
  // @ts-expect-error a value outside the enum
  await tickets.list({ filter: { status: 'pending' } })
  // @ts-expect-error a text operator on a number field
  await tickets.list({ filter: { priority: { _starts_with: '1' } } })
  // @ts-expect-error a boolean compared with a string
  await tickets.list({ filter: { done: 'yes' } })
  // @ts-expect-error a sort key that is no field
  await tickets.list({ sortBy: '-priorty' })
  // @ts-expect-error a projection of a field that does not exist
  await tickets.list({ fields: ['nope'] })
}

export async function typedRecords(): Promise<void> {
  const one = await tickets.get('id')
  const title: string = one.title
  const version: number = one._version
  void [title, version]
  // @ts-expect-error records are typed: no such field
  void one.titel
  // @ts-expect-error a create with a value of the wrong type
  await tickets.create({ title: 1 })
  await tickets.update('id', { priority: 2 }, { version: one._version })
  // @ts-expect-error an update with a value of the wrong type
  await tickets.update('id', { done: 'no' })
}

export async function withoutSchema(): Promise<void> {
  // A type given at the call site, without Collections.
  const untyped = createClient({ url: 'http://127.0.0.1:8090' })
  const byType = untyped.collection<Ticket>('tickets')
  await byType.list({ filter: { priority: { _gt: 1 } } })
  // @ts-expect-error still typed by the record given
  await byType.list({ filter: { nope: 1 } })
  // Without any type, any field goes.
  await untyped.collection('anything').list({ filter: { whatever: { _eq: 1 } } })
  const filter: Filter<Ticket> = { title: { _ends_with: 'fails' } }
  void filter
}

// A flow body as the generated types publish it (discriminated by triggerType, steps by type).
type FlowCreateBody = ApiOperations['automateFlows.create']['requestBody']['content']['application/json']

export const webhookFlow: FlowCreateBody = {
  name: 'Order sync',
  triggerType: 'webhook',
  triggerConfig: { allowed_methods: ['POST'], require_auth: true },
  operations: [
    { key: 'wait', type: 'delay', config: { ms: 5 } },
    { key: 'say', type: 'log', config: { message: 'order {{$trigger.body.id}}' } },
  ],
}

export const wrongTriggerConfig: FlowCreateBody = {
  name: 'Nightly',
  triggerType: 'webhook',
  // @ts-expect-error a webhook trigger has no such option
  triggerConfig: { allowed_methods: ['POST'], cron: '0 3 * * *' },
  operations: [],
}

export const wrongStepConfig: ApiSchemas['FlowStep'] = {
  key: 'wait',
  type: 'delay',
  // @ts-expect-error delay's ms is a number
  config: { ms: 'soon' },
}
