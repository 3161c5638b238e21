import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'

/**
 * The logic and transform operations of issue 16 in a real flow over HTTP, on SQLite and PostgreSQL: a
 * loop whose body switches on each item and formats it, transform, json_parse and datetime, with what the
 * step logs record; and the save-time checks (422) reaching into loop bodies, switch cases and patterns.
 * Each operation's own rules are in src/modules/operations/catalog/<operation>.test.ts.
 */
const BASE = '/api/v1/automate'
let server: TestServer
let owner: Account

const call = (method: string, path: string, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token: owner.token, body })

async function execute(operations: unknown[], body: unknown): Promise<any> {
  const created = await call('POST', `${BASE}/flows`, {
    name: 'Logic ops',
    triggerType: 'manual',
    triggerConfig: {},
    operations,
  })
  expect(created.status, created.text).toBe(201)
  const id = created.body.data.id
  expect((await call('POST', `${BASE}/flows/${id}/publish`, { changeSummary: 'v1' })).status).toBe(200)
  expect((await call('PATCH', `${BASE}/flows/${id}/status`, { status: 'active' })).status).toBe(200)
  const started = await call('POST', `${BASE}/flows/${id}/execute`, body)
  expect(started.status, started.text).toBe(202)
  const deadline = Date.now() + 20_000
  for (;;) {
    const run = (await call('GET', `${BASE}/runs/${started.body.data.runId}`)).body.data
    if (!['pending', 'running'].includes(run.status)) return run
    if (Date.now() > deadline) throw new Error(`run did not end: ${JSON.stringify(run)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
})

describe('logic and transform operations in a flow', () => {
  it('a loop over the trigger body switches on each item and formats it; the passes are logged <loop>[n].<step>', async () => {
    const run = await execute(
      [
        {
          key: 'each',
          type: 'loop',
          config: {
            items: '{{$trigger.body.items}}',
            mode: 'batch',
            batchSize: 2,
            operations: [
              {
                key: 'kind',
                type: 'switch',
                config: {
                  value: '{{$steps.each.item.kind}}',
                  cases: [
                    {
                      match: 'book',
                      steps: [
                        {
                          key: 'label',
                          type: 'text_format',
                          config: {
                            template: '{{$steps.each.index}}: {{$steps.each.item.title}}',
                            operations: [{ type: 'uppercase' }],
                          },
                        },
                      ],
                    },
                  ],
                  default: [
                    {
                      key: 'other',
                      type: 'set_variable',
                      config: { key: 'o', value: 'skipped {{$steps.each.item.kind}}' },
                    },
                  ],
                },
              },
            ],
          },
        },
        {
          key: 'labels',
          type: 'transform',
          config: {
            input: '{{$steps.each.results}}',
            operations: [
              { type: 'filter', rules: { field: '$item.kind.case', operator: 'eq', value: 0 } },
              { type: 'map', field: 'kind.outputs.label.result' },
            ],
          },
        },
        { key: 'parsed', type: 'json_parse', config: { input: '{{$trigger.body.raw}}', path: 'meta.due' } },
        {
          key: 'due',
          type: 'datetime',
          config: {
            operation: 'add',
            value: '{{$steps.parsed.result}}',
            amount: 1,
            unit: 'days',
            timezone: 'Europe/Paris',
            format: 'yyyy-MM-dd HH:mm',
          },
        },
      ],
      {
        items: [{ kind: 'book', title: 'Dune' }, { kind: 'pen' }, { kind: 'book', title: 'Emma' }],
        raw: '{"meta":{"due":"2026-03-28T12:00:00+01:00"}}',
      },
    )
    expect(run.status, JSON.stringify(run.error)).toBe('completed')
    const output = (key: string) => run.stepLogs.find((log: any) => log.key === key)?.output
    expect(output('each')).toMatchObject({ count: 3 })
    expect(output('labels')).toEqual({ result: ['0: DUNE', '2: EMMA'] })
    expect(output('parsed')).toEqual({ result: '2026-03-28T12:00:00+01:00' })
    expect(output('due')).toEqual({ result: '2026-03-29 12:00' })
    // Passes of one batch run together, so their logs interleave (positions are in order of start).
    expect(run.stepLogs.map((log: any) => log.key).sort()).toEqual([
      'due',
      'each',
      'each[0].kind',
      'each[0].kind.label',
      'each[1].kind',
      'each[1].kind.other',
      'each[2].kind',
      'each[2].kind.label',
      'labels',
      'parsed',
    ])
    expect(output('each[1].kind.other')).toBe('skipped pen')
  })

  it('a failing pass fails the run at the loop, its step log says which pass', async () => {
    const run = await execute(
      [
        {
          key: 'each',
          type: 'loop',
          config: {
            items: [1, 2, 3],
            operations: [
              {
                key: 'check',
                type: 'throw_error',
                config: { message: 'bad item {{$steps.each.item}}', statusCode: 422 },
                condition: { field: '$steps.each.item', operator: 'eq', value: 2 },
              },
            ],
          },
        },
      ],
      {},
    )
    expect(run).toMatchObject({ status: 'failed', error: { step: 'each' } })
    expect(run.stepLogs.map((log: any) => [log.key, log.status])).toEqual([
      ['each', 'failed'],
      ['each[0].check', 'skipped'],
      ['each[1].check', 'failed'],
    ])
    expect(run.stepLogs[2].error).toMatchObject({ code: 'flow_error', message: 'bad item 2' })
  })

  it('saving refuses a bad step inside a loop body or a switch case, and a pattern RE2 cannot run, naming the path (422)', async () => {
    const refused: [unknown[], string][] = [
      [
        [
          {
            key: 'each',
            type: 'loop',
            config: { items: [1], batchSize: 51, operations: [{ key: 'a', type: 'log', config: { message: 'x' } }] },
          },
        ],
        'operations[0].config.batchSize',
      ],
      [
        [
          {
            key: 'each',
            type: 'loop',
            config: { items: [1], operations: [{ key: 'a', type: 'delay', config: { ms: 25_001 } }] },
          },
        ],
        'operations[0].config.operations[0].config.ms',
      ],
      [
        [
          {
            key: 'sw',
            type: 'switch',
            config: { value: 1, cases: [{ match: 1, steps: [{ key: 'b', type: 'nope', config: {} }] }] },
          },
        ],
        'operations[0].config.cases[0].steps[0].type',
      ],
      [
        [
          {
            key: 'tf',
            type: 'text_format',
            config: { template: 'x', operations: [{ type: 'regex_replace', pattern: '(?<=a)b' }] },
          },
        ],
        'operations[0].config.operations[0].pattern',
      ],
      [
        [{ key: 'dt', type: 'datetime', config: { operation: 'now', timezone: 'Mars/Olympus' } }],
        'operations[0].config.timezone',
      ],
      [[{ key: 'tr', type: 'trigger_flow', config: { flowId: 'x', async: 'maybe' } }], 'operations[0].config.async'],
    ]
    for (const [operations, path] of refused) {
      const reply = await call('POST', `${BASE}/flows`, {
        name: 'Bad',
        triggerType: 'manual',
        triggerConfig: {},
        operations,
      })
      expect(reply.status, reply.text).toBe(422)
      expect(reply.body).toMatchObject({ error: 'validation_error', details: { path } })
    }
  })
})
