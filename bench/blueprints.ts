// npm run bench blueprints (issue 30: plan under 1 s, install of the example under 2 s).
// (a) validate and plan of a 1,000,000-byte document of 200 bricks against a project holding nothing. The
//     baseline is the same bytes posted to the same route with one unknown key, refused right after the body
//     is read and parsed: what any endpoint pays to take a megabyte of JSON. validate's ratio to it is the
//     document's reading; plan's ratio to validate is the planner's own work (a read of the project per brick).
// (b) the help desk example (examples/) installed by POST /installs?apply=true and by the two-phase protocol,
//     beside the baseline of the same calls made one by one over HTTP with no ledger: the ratios are what the
//     install run adds (planning, ledger rows, read-backs) less the round trips it saves.
import { readFileSync } from 'node:fs'
import { api, percentile, startPlinth, type Child } from './support.js'

const planTargetMs = 1000
const installTargetMs = 2000
/** Timed calls per subject in (a); the p95 needs a few more than the other benches' five rounds. */
const samples = Number(process.env.BENCH_SAMPLES ?? 21)
/** Installs per side in (b): each makes a whole app under a namespace of its own. */
const installRounds = Number(process.env.BENCH_ROUNDS ?? 5)
const documentBytes = 1_000_000
const brickCount = 200

const fence = (info: string, body: unknown) => `\`\`\`service:${info}\n${JSON.stringify(body, null, 2)}\n\`\`\`\n`
const field = (name: string, type: string, extra: Record<string, unknown> = {}) => ({
  name,
  type,
  required: false,
  unique: false,
  indexed: false,
  ...extra,
})

/** One brick of each kind, `i` its index within the kind; bodies as a real app would write them. */
const makers: Record<string, (i: number) => string> = {
  collection: (i) =>
    fence(`collection id=c${i}`, {
      name: `\${params.prefix}_things_${i}`,
      accessPreset: 'private',
      fields: [
        field('title', 'text', { required: true, indexed: true }),
        field('slug', 'text', { indexed: true }),
        field('status', 'enum', { enumValues: ['new', 'active', 'done'], defaultValue: 'new' }),
        field('amount', 'decimal'),
        field('due', 'date'),
        field('notes', 'text'),
        field('meta', 'json'),
      ],
      indexes: [{ fields: ['status', '-due'] }],
    }),
  access: (i) =>
    fence(`access id=a${i} needs=c${i}`, {
      collection: `\${params.prefix}_things_${i}`,
      accessControl: { preset: 'private', sharing: i % 2 === 0 },
    }),
  role: (i) => fence(`role id=r${i}`, { name: `\${params.prefix}_role_${i}`, description: `Team ${i} of the app` }),
  grants: (i) =>
    fence(`grants id=g${i} needs=r${i},c${i}`, {
      role: `\${params.prefix}_role_${i}`,
      grants: ['read', 'create', 'update'].map((action) => ({
        resource: `collections/\${params.prefix}_things_${i}`,
        action,
      })),
    }),
  records: (i) =>
    fence(`records id=s${i} needs=c${i}`, {
      collection: `\${params.prefix}_things_${i}`,
      key: 'slug',
      rows: Array.from({ length: 10 }, (_, n) => ({ slug: `row-${n}`, title: `Row ${n} of seed ${i}`, status: 'new' })),
    }),
  view: (i) =>
    fence(`view id=v${i} needs=c${i}`, {
      name: `Active things ${i}`,
      collection: `\${params.prefix}_things_${i}`,
      shared: true,
      filter: { status: { _eq: 'active' } },
      sortBy: '-due',
      fields: ['title', 'status', 'due', 'amount'],
      limit: 50,
      layout: 'table',
    }),
  nav: (i) =>
    fence(`nav id=n${i} needs=c${i}`, {
      label: `\${params.prefix} things ${i}`,
      icon: 'list',
      target: { kind: 'collection', ref: `\${params.prefix}_things_${i}` },
    }),
  lens: (i) =>
    fence(`lens id=l${i} needs=c${i}`, {
      name: `\${params.prefix} summary ${i}`,
      collection: `\${params.prefix}_things_${i}`,
      fields: ['title', 'status', 'due'],
      sort: [{ field: 'due', order: 'asc' }],
      template: { html: '<ul>{{#rows}}<li>{{title}}: {{status}}</li>{{/rows}}</ul>' },
    }),
  flow: (i) =>
    fence(`flow id=f${i} needs=c${i}`, {
      name: `Note new things ${i}`,
      triggerType: 'event_action',
      triggerConfig: { events: ['record.create'] },
      collections: [`\${params.prefix}_things_${i}`],
      operations: [
        { key: 'note', type: 'log', config: { message: 'New thing {{$trigger.body.after.title}}' } },
        {
          key: 'mark',
          type: 'crud_update',
          config: {
            collection: `\${params.prefix}_things_${i}`,
            id: '{{$trigger.body.after.id}}',
            data: { status: 'active' },
          },
        },
      ],
    }),
  webhook: (i) =>
    fence(`webhook id=w${i} needs=c${i}`, {
      name: `\${params.prefix}_hook_${i}`,
      collection: `\${params.prefix}_things_${i}`,
      events: ['record.create', 'record.update'],
      url: `https://hooks.example.com/things/${i}`,
      secret: '${params.hookSecret}',
    }),
  script: (i) =>
    fence(`script id=x${i}`, {
      name: `\${params.prefix}_script_${i}`,
      code: `export default (input) => ({ doubled: input.n * 2, seed: ${i} })`,
      allowed_hosts: ['api.example.com'],
    }),
  renderer: (i) =>
    fence(`renderer id=d${i} needs=c${i}`, {
      name: `Thing card ${i}`,
      collection: `\${params.prefix}_things_${i}`,
      kind: 'card',
      template: '<b>{{title}}</b> <i>{{status}}</i>',
    }),
  'search-index': (i) =>
    fence(`search-index id=i${i} needs=c${i}`, {
      name: `\${params.prefix}-search-${i}`,
      sources: [{ collection: `\${params.prefix}_things_${i}`, fields: ['title', 'notes'] }],
    }),
  container: (i) =>
    fence(`container id=k${i}`, {
      name: `\${params.prefix}_files_${i}`,
      prefix: `files-${i}`,
      allowedTypes: ['application/pdf', 'image/png'],
    }),
}

/** How many bricks of each kind: 200 in all, every kind but attachment (its lens must exist first). */
const mix: Record<string, number> = {
  collection: 30,
  access: 30,
  role: 15,
  grants: 15,
  records: 20,
  view: 20,
  nav: 20,
  lens: 10,
  flow: 10,
  webhook: 10,
  script: 5,
  renderer: 5,
  'search-index': 5,
  container: 5,
}

/** A document of exactly `documentBytes` bytes: the bricks, each after a paragraph of prose padding it out. */
export function largeDocument(): string {
  const head = [
    '---',
    'format: service-blueprint-v1',
    'id: big-app',
    'name: A large application',
    'version: 1.0.0',
    'params:',
    '  - name: prefix',
    '    type: identifier',
    '    namespace: true',
    '    default: big',
    '  - name: hookSecret',
    '    type: secret',
    '---',
    '',
    '# A large application',
    '',
  ].join('\n')
  const bricks = Object.entries(mix).flatMap(([kind, count]) =>
    Array.from({ length: count }, (_, i) => makers[kind]!(i)),
  )
  if (bricks.length !== brickCount) throw new Error(`${bricks.length} bricks, not ${brickCount}`)
  const fixed = head.length + bricks.reduce((n, b) => n + b.length + 2, 0)
  const room = documentBytes - fixed
  if (room < 0) throw new Error('the bricks alone are over the document size')
  const sentence = 'This part of the app keeps its records tidy, and the prose explains why it is built this way. '
  const prose = (bytes: number) => `${sentence.repeat(Math.ceil(bytes / sentence.length)).slice(0, bytes - 1)}\n`
  const per = Math.floor(room / bricks.length)
  const parts = bricks.map((b, n) => `${prose(n === 0 ? room - per * (bricks.length - 1) : per)}\n${b}\n`)
  const doc = head + parts.join('')
  if (Buffer.byteLength(doc) !== documentBytes) throw new Error(`${Buffer.byteLength(doc)} bytes`)
  return doc
}

/** One POST, timed from sending to the whole answer read; the status must be `expected`. */
async function timedPost(url: string, token: string, path: string, body: string, expected: number): Promise<number> {
  const started = performance.now()
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  })
  const text = await res.text()
  const ms = performance.now() - started
  if (res.status !== expected) throw new Error(`POST ${path}: ${res.status}, not ${expected}: ${text.slice(0, 500)}`)
  return ms
}

const ms = (n: number) => `${n.toFixed(1)} ms`
const stats = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95) }
}

/** (a) validate and plan of the large document; baseline: the same bytes refused right after JSON parsing. */
async function benchPlan(plinth: Child, token: string): Promise<boolean> {
  const source = largeDocument()
  const validateBody = JSON.stringify({ source })
  const planBody = JSON.stringify({ source, params: { prefix: 'big' } })
  // An unknown key: the route parses the same JSON and answers 400 before reading the document.
  const transportBody = JSON.stringify({ source, transport: true })
  const checked = await api(plinth.url, token, 'POST', '/api/v1/blueprints/plan', JSON.parse(planBody))
  const { ok, installable, verdicts } = checked.data as { ok: boolean; installable: boolean; verdicts: unknown[] }
  if (!ok || !installable || verdicts.length !== brickCount)
    throw new Error(`the large document does not plan: ${JSON.stringify(checked.data).slice(0, 1000)}`)
  const times: Record<'transport' | 'validate' | 'plan', number[]> = { transport: [], validate: [], plan: [] }
  for (let i = 0; i <= samples; i++) {
    // Alternated, so drift in the machine's speed lands on all three; the first round warms up.
    const t = await timedPost(plinth.url, token, '/api/v1/blueprints/validate', transportBody, 400)
    const v = await timedPost(plinth.url, token, '/api/v1/blueprints/validate', validateBody, 200)
    const p = await timedPost(plinth.url, token, '/api/v1/blueprints/plan', planBody, 200)
    if (i === 0) continue
    times.transport.push(t)
    times.validate.push(v)
    times.plan.push(p)
  }
  const [t, v, p] = [stats(times.transport), stats(times.validate), stats(times.plan)]
  const met = p.p95 < planTargetMs
  console.log(
    `blueprints: ${documentBytes.toLocaleString('en-US')}-byte document, ${brickCount} bricks, ${samples} samples each\n` +
      `  transport (same bytes, refused after JSON parse) p50 ${ms(t.p50)} p95 ${ms(t.p95)}\n` +
      `  validate p50 ${ms(v.p50)} p95 ${ms(v.p95)}; ratio to transport ${(v.p50 / t.p50).toFixed(2)}\n` +
      `  plan     p50 ${ms(p.p50)} p95 ${ms(p.p95)}; ratio to validate ${(p.p50 / v.p50).toFixed(2)}; ` +
      `target p95 < ${planTargetMs} ms ${met ? 'OK' : 'ABOVE TARGET'}`,
  )
  return met
}

interface Action {
  brickId: string
  method: string
  path: string
  body: unknown
}

const example = readFileSync(new URL('../examples/help-desk.ebp.md', import.meta.url), 'utf8')
const hookSecret = 'bench-hook-secret-value'

/** The actions' calls, in order, as a two-phase client makes them (role and secret placeholders filled). */
async function makeCalls(plinth: Child, token: string, actions: readonly Action[]): Promise<void> {
  const roles: Record<string, string> = {}
  for (const action of actions) {
    const path = action.path.replace(/\$\{role:([^}]+)\}/, (_m, name: string) => roles[name]!)
    const body = JSON.parse(JSON.stringify(action.body).replaceAll('${secret:hookSecret}', hookSecret))
    const answer = await api(plinth.url, token, action.method, path, body)
    if (action.path === '/api/v1/roles') roles[answer.data.name] = answer.data.id
  }
}

/**
 * The example under a blueprint id of its own: the ledger holds one live install per blueprint id, and each
 * round must make the whole app, not plan as an upgrade of the round before.
 */
const exampleAs = (prefix: string) => example.replace(/^id: help-desk$/m, `id: help-desk-${prefix}`)

/** Every resource made, none adopted, the run complete: a cheaper round would not be the same work. */
function checkInstall(install: { status: string; resources: { verdict: string; status: string }[] }): void {
  if (install.status !== 'complete' || install.resources.some((r) => r.verdict !== 'CREATE' || r.status !== 'settled'))
    throw new Error(`the install is not a complete new one: ${JSON.stringify(install).slice(0, 1000)}`)
}

/** The baseline of (b): the plan's calls for a fresh namespace, made one by one over HTTP (the plan not timed). */
async function installByHand(plinth: Child, token: string, prefix: string): Promise<number> {
  const plan = await api(plinth.url, token, 'POST', '/api/v1/blueprints/plan', { source: example, params: { prefix } })
  const verdicts = (plan.data.verdicts as { verdict: string }[]).map((v) => v.verdict)
  if (!plan.data.installable || verdicts.some((v) => v !== 'CREATE'))
    throw new Error(`the example does not plan as new under ${prefix}: ${verdicts.join(', ')}`)
  const started = performance.now()
  await makeCalls(plinth, token, plan.data.actions as Action[])
  return performance.now() - started
}

/** Two-phase: open (the server plans and writes the pending rows), the client's calls, then settle (read-backs). */
async function installTwoPhase(plinth: Child, token: string, prefix: string): Promise<number> {
  const started = performance.now()
  const opened = (
    await api(plinth.url, token, 'POST', '/api/v1/blueprints/installs', {
      source: exampleAs(prefix),
      params: { prefix },
      consent: ['agents-grants'],
    })
  ).data as { id: string; actions: Action[]; resources: { id: string }[] }
  await makeCalls(plinth, token, opened.actions)
  const settled = await api(plinth.url, token, 'POST', `/api/v1/blueprints/installs/${opened.id}/settle`, {
    outcomes: opened.resources.map((r) => ({ resourceId: r.id, ok: true })),
    final: true,
  })
  const took = performance.now() - started
  checkInstall(settled.data)
  return took
}

/** One POST /installs?apply=true: the server plans, makes every call as the caller, reads back and settles. */
async function installApplied(plinth: Child, token: string, prefix: string): Promise<number> {
  const started = performance.now()
  const installed = await api(plinth.url, token, 'POST', '/api/v1/blueprints/installs?apply=true', {
    source: exampleAs(prefix),
    params: { prefix },
    secrets: { hookSecret },
    consent: ['agents-grants'],
  })
  const took = performance.now() - started
  checkInstall(installed.data)
  return took
}

/** (b) the example app installed three ways, alternated, each install under a namespace of its own. */
async function benchInstall(plinth: Child, token: string): Promise<boolean> {
  const times: Record<'hand' | 'twoPhase' | 'applied', number[]> = { hand: [], twoPhase: [], applied: [] }
  for (let i = 0; i <= installRounds; i++) {
    // The first round warms up and is not counted.
    const hand = await installByHand(plinth, token, `h${i}`)
    const twoPhase = await installTwoPhase(plinth, token, `t${i}`)
    const applied = await installApplied(plinth, token, `a${i}`)
    if (i === 0) continue
    times.hand.push(hand)
    times.twoPhase.push(twoPhase)
    times.applied.push(applied)
  }
  const [h, t, a] = [stats(times.hand), stats(times.twoPhase), stats(times.applied)]
  const met = a.p95 < installTargetMs && t.p95 < installTargetMs
  console.log(
    `blueprints: install the help desk example (13 bricks, 15 calls), ${installRounds} installs each\n` +
      `  by hand, the 15 calls over HTTP (baseline)  p50 ${ms(h.p50)} p95 ${ms(h.p95)}\n` +
      `  two-phase: open, the 15 calls, settle       p50 ${ms(t.p50)} p95 ${ms(t.p95)}; ratio to by hand ${(t.p50 / h.p50).toFixed(2)}\n` +
      `  POST /installs?apply=true                   p50 ${ms(a.p50)} p95 ${ms(a.p95)}; ratio to by hand ${(a.p50 / h.p50).toFixed(2)}\n` +
      `  target p95 < ${installTargetMs} ms ${met ? 'OK' : 'ABOVE TARGET'}`,
  )
  return met
}

export async function benchBlueprints(): Promise<{ ok: boolean }> {
  const plinth = await startPlinth({ PASSWORD_HASH_ITERATIONS: '1000' })
  try {
    const { token } = await api(plinth.url, '', 'POST', '/api/auth/sign-up/email', {
      email: 'bench@example.com',
      password: 'bench password',
      name: 'B',
    })
    const planned = await benchPlan(plinth, token)
    const installed = await benchInstall(plinth, token)
    return { ok: planned && installed }
  } finally {
    await plinth.stop()
  }
}
