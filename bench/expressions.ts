import jsonata from 'jsonata'
import { expressionLimits, GuardedRegExp, plain } from '../src/modules/operations/expression-bounds.js'
import { evaluateBatch, expressionTimeoutMs, precomputeExpressions } from '../src/modules/operations/expressions.js'

/**
 * Issue 25: what moving JSONata out of the server's process costs (decision 046). The old path (compiled
 * once, evaluated on the main thread, as before the change) against the new one (one message per step
 * to an evaluator process, only what the expressions read sent), in the same process and run, for a
 * typical step config with two `{{= }}` templates and a typical run_expression; and the same template with
 * a 1 MB step output in the context that it does not read. Printed per evaluation: wall time one at a
 * time, this process's CPU (the evaluator's own is another process's; V8's GC threads count here), and
 * throughput with 16 in flight: the median of BENCH_ROUNDS (5) rounds, baseline and subject alternating.
 */
const rows = Array.from({ length: 50 }, (_, i) => ({
  id: `r${i}`,
  status: i % 3 === 0 ? 'open' : 'closed',
  price: i * 1.5,
  qty: (i % 4) + 1,
  name: `item ${i}`,
}))
const context: Record<string, unknown> = {
  $trigger: {
    event: null,
    collection: null,
    method: 'POST',
    body: { id: 42, name: 'Ada', email: 'ada@example.com', tags: ['a', 'b'], total: 12.5 },
  },
  $steps: { query: { rows, total: rows.length }, fetch: { status: 200, body: { ok: true } } },
  $user: { id: 'u1', email: 'ada@example.com' },
  $flow: { id: 'f1' },
  $run: { id: 'r1' },
  $now: '2026-01-01T00:00:00.000Z',
}
const bigContext = { ...context, $steps: { ...(context.$steps as object), export: { body: 'x'.repeat(1_000_000) } } }
const templateCodes = [
  '$sum($steps.query.rows.(price * qty))',
  '$uppercase($trigger.body.name) & " #" & $string($trigger.body.id)',
]
const expression = '$steps.query.rows[status = "open"].{ "id": id, "total": price * qty }'

// The old path, as src/modules/operations/expressions.ts and run-expression.ts evaluated before.
const compiled = new Map<string, jsonata.Expression>()
function compileOld(code: string, timeout: number): jsonata.Expression {
  const key = `${timeout}\u0000${code}`
  let found = compiled.get(key)
  if (!found) {
    found = jsonata(code, {
      timeout,
      stack: expressionLimits.stack,
      sequence: expressionLimits.sequence,
      RegexEngine: GuardedRegExp as unknown as RegExpConstructor,
    })
    compiled.set(key, found)
  }
  return found
}
async function oldTemplate(data: Record<string, unknown>): Promise<unknown[]> {
  const bindings: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(data))
    if (name.startsWith('$') && name !== '$now') bindings[name.slice(1)] = value
  return Promise.all(
    templateCodes.map(async (code) => plain(await compileOld(code, expressionTimeoutMs).evaluate(data, bindings))),
  )
}
async function oldRunExpression(): Promise<unknown> {
  const data = { ...(context.$trigger as { body: object }).body }
  const bindings = {
    trigger: context.$trigger,
    steps: context.$steps,
    user: context.$user,
    flow: context.$flow,
    run: context.$run,
    data,
  }
  return plain(await compileOld(expression, 5000).evaluate(data, bindings))
}

async function newTemplate(data: Record<string, unknown>): Promise<unknown[]> {
  const evaluate = await precomputeExpressions(templateCodes, data)
  return templateCodes.map((code) => evaluate(code, data))
}
async function newRunExpression(): Promise<unknown> {
  const data = { ...(context.$trigger as { body: object }).body }
  const variables = {
    trigger: context.$trigger,
    steps: context.$steps,
    user: context.$user,
    flow: context.$flow,
    run: context.$run,
    data,
  }
  const [outcome] = await evaluateBatch([expression], { kind: 'variables', variables, input: 'data' }, 5000)
  if (!outcome!.ok) throw new Error(outcome!.message)
  return outcome!.value
}

interface Figures {
  /** Wall µs per evaluation, one at a time. */
  readonly wallMicros: number
  /** This process's CPU µs per evaluation. */
  readonly cpuMicros: number
  /** Evaluations per second with 16 in flight. */
  readonly rate: number
}

const sequential = Number(process.env.BENCH_EXPRESSIONS ?? 2000)
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)

/** Each figure's median over the rounds. */
function median(list: readonly Figures[]): Figures {
  const mid = (pick: (f: Figures) => number) => [...list].map(pick).sort((a, b) => a - b)[Math.floor(list.length / 2)]!
  return { wallMicros: mid((f) => f.wallMicros), cpuMicros: mid((f) => f.cpuMicros), rate: mid((f) => f.rate) }
}
const inFlight = 16

async function figures(run: () => Promise<unknown>): Promise<Figures> {
  for (let i = 0; i < 300; i++) await run() // warm: compile caches, the evaluator processes, the JIT
  const cpu = process.cpuUsage()
  const started = process.hrtime.bigint()
  for (let i = 0; i < sequential; i++) await run()
  const wall = Number(process.hrtime.bigint() - started) / 1000 / sequential
  const used = process.cpuUsage(cpu)
  const burst = sequential
  const burstStarted = process.hrtime.bigint()
  let next = 0
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next++ < burst) await run()
    }),
  )
  const seconds = Number(process.hrtime.bigint() - burstStarted) / 1e9
  return { wallMicros: wall, cpuMicros: (used.user + used.system) / sequential, rate: burst / seconds }
}

function print(name: string, old: Figures, now: Figures): void {
  const f = (n: number) => n.toFixed(1)
  console.log(`\n${name}`)
  console.log(
    `  in process (before): ${f(old.wallMicros)} µs wall, ${f(old.cpuMicros)} µs CPU, ${Math.round(old.rate)}/s at ${inFlight} in flight`,
  )
  console.log(
    `  evaluator process  : ${f(now.wallMicros)} µs wall, ${f(now.cpuMicros)} µs CPU here, ${Math.round(now.rate)}/s at ${inFlight} in flight`,
  )
  console.log(
    `  ratio new/old      : wall ×${(now.wallMicros / old.wallMicros).toFixed(2)}, CPU here ×${(now.cpuMicros / old.cpuMicros).toFixed(2)}, throughput ×${(now.rate / old.rate).toFixed(2)}`,
  )
}

/** Prints the figures; fails only when the two paths disagree on a result. */
export async function benchExpressions(): Promise<{ ok: boolean }> {
  const same =
    JSON.stringify(await oldTemplate(context)) === JSON.stringify(await newTemplate(context)) &&
    JSON.stringify(await oldRunExpression()) === JSON.stringify(await newRunExpression())
  if (!same) console.log('expressions: the two paths gave different results')
  // Baseline and subject alternate round by round, so a machine that speeds up or slows down shifts both alike.
  const cases: [string, () => Promise<unknown>, () => Promise<unknown>][] = [
    [
      `a step config with two {{= }} templates (${templateCodes.join(' ; ')})`,
      () => oldTemplate(context),
      () => newTemplate(context),
    ],
    [`run_expression (${expression}) over 50 rows`, oldRunExpression, newRunExpression],
    [
      'the same two templates, with a 1 MB step output in the context they do not read',
      () => oldTemplate(bigContext),
      () => newTemplate(bigContext),
    ],
  ]
  for (const [name, old, now] of cases) {
    const olds: Figures[] = []
    const nows: Figures[] = []
    for (let round = 0; round < rounds; round++) {
      olds.push(await figures(old))
      nows.push(await figures(now))
    }
    print(name, median(olds), median(nows))
  }
  return { ok: same }
}
