import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { subscribeMany, type Subscriber, type Transport } from './realtime-clients.js'
import { api, freePort, percentile, startChild, startPlinth, type Child } from './support.js'

// Issue 33, item 3: realtime fan-out. The server (Plinth, embedded mode) runs in its own process, pinned
// to one core where taskset exists; this process is the load generator: it holds the subscribers (raw
// sockets, realtime-clients.ts) on the other core and sends the creates.
//
// Per transport, a run holds N subscribers of one collection, spread over BENCH_RT_USERS people in three
// roles whose frames differ (every field; a field allowlist; a row filter naming $CURRENT_USER, so each
// such person is a visibility class of their own), then sends BENCH_RT_CREATES creates 500 ms apart,
// every one of them visible to every subscriber. Delivery time of a frame = the moment this process read
// it − the moment it sent the create (both on this process's clock, so no clock skew). Every subscriber
// must receive every event. Reported: p50/p99/max delivery, the creates' own answer times, and the
// server's resident memory per idle subscriber (VmRSS after connecting minus before, over N).
//
// Baselines in the same run (house rule), same client, same transport, same N:
// - the floor (bench/servers/realtime-floor.mjs): a bare Node server that answers the create at once and
//   then writes one prebuilt frame to every socket in one loop. It is what this machine's kernel and Node
//   cost per frame (on loopback, most of a write is the TCP receive path, run on the writer's core); the
//   ratio printed is Plinth's p99 over the floor's;
// - Plinth with 1,000 subscribers (the ratio p99(N) / p99(1,000) shows how the fan-out scales).
// The target is absolute: p99 under 100 ms at 10,000 subscribers.

const subscribers = Number(process.env.BENCH_RT_SUBSCRIBERS ?? 10_000)
const baselineSubscribers = Number(process.env.BENCH_RT_BASELINE ?? 1_000)
const users = Number(process.env.BENCH_RT_USERS ?? 60)
const creates = Number(process.env.BENCH_RT_CREATES ?? 20)
const transports = (process.env.BENCH_RT_TRANSPORTS ?? 'websocket,sse').split(',') as Transport[]
const gapMs = 500
const targetP99Ms = 100

interface Run {
  name: string
  transport: Transport
  subscribers: number
  p50: number
  p99: number
  max: number
  /** Create answer times (ms): p50 and max. */
  create: { p50: number; max: number }
  /** Server resident memory per idle subscriber, bytes. */
  bytesPerSubscriber: number
  missing: number
}

function rssBytes(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) * 1024
}

async function setUp(plinth: Child): Promise<{ tokens: string[] }> {
  const { token } = await api(plinth.url, '', 'POST', '/api/auth/sign-up/email', {
    email: 'owner@example.com',
    password: 'bench password',
    name: 'Owner',
  })
  await api(plinth.url, token, 'POST', '/api/v1/collections', {
    name: 'items',
    fields: [
      { name: 'title', type: 'text', required: true },
      { name: 'status', type: 'text', required: false },
      { name: 'secret', type: 'text', required: false },
      { name: 'rank', type: 'integer', required: false },
    ],
    accessControl: { preset: 'team' },
  })
  const roles: [string, unknown][] = [
    ['rt_all', { resource: 'collections/items', action: 'read' }],
    ['rt_narrow', { resource: 'collections/items', action: 'read', fields: ['title', 'status'] }],
    [
      'rt_own',
      {
        resource: 'collections/items',
        action: 'read',
        item_filter: { _or: [{ status: { _eq: 'open' } }, { created_by: { _eq: '$CURRENT_USER' } }] },
        fields: ['title', 'status', 'rank'],
      },
    ],
  ]
  for (const [name, grant] of roles) {
    const role = await api(plinth.url, token, 'POST', '/api/v1/roles', { name })
    await api(plinth.url, token, 'PUT', `/api/v1/roles/${role.data.id}/grants`, { grants: [grant] })
  }
  const tokens: string[] = []
  for (let i = 0; i < users; i++) {
    const email = `reader${i}@example.com`
    const password = 'bench password'
    await api(plinth.url, token, 'POST', '/api/v1/users', { email, password, name: `R${i}`, role: roles[i % 3]![0] })
    tokens.push((await api(plinth.url, '', 'POST', '/api/auth/sign-in/email', { email, password })).token)
  }
  return { tokens: [token, ...tokens] }
}

/** A server under test: where subscribers connect and how one create is sent. */
interface Target {
  readonly name: string
  readonly child: Child
  readonly path: string
  tokenOf(i: number): string
  create(n: number, i: number): Promise<unknown>
}

async function run(target: Target, transport: Transport, count: number, round: number): Promise<Run> {
  const port = Number(new URL(target.child.url).port)
  const before = rssBytes(target.child.process.pid)
  const subs: Subscriber[] = await subscribeMany(port, target.path, count, target.tokenOf, transport)
  await sleep(1000)
  const bytesPerSubscriber = (rssBytes(target.child.process.pid) - before) / count
  const sent: number[] = []
  const answered: number[] = []
  const first = round * 1000
  for (let i = 0; i < creates; i++) {
    const started = performance.now()
    sent.push(started)
    await target.create(first + i, i)
    answered.push(performance.now() - started)
    await sleep(Math.max(0, gapMs - (performance.now() - started)))
  }
  // Every frame has had its chance: wait until all arrived or 5 s passed.
  const deadline = performance.now() + 5000
  while (performance.now() < deadline && subs.some((s) => s.arrivals.size < creates)) await sleep(50)
  const times: number[] = []
  let missing = 0
  for (const s of subs) {
    for (let i = 0; i < creates; i++) {
      const at = s.arrivals.get(first + i)
      if (at === undefined) missing++
      else times.push(at - sent[i]!)
    }
  }
  for (const s of subs) s.close()
  await Promise.all(subs.map((s) => s.ended))
  await sleep(500)
  times.sort((a, b) => a - b)
  answered.sort((a, b) => a - b)
  return {
    name: target.name,
    transport,
    subscribers: count,
    p50: percentile(times, 0.5),
    p99: percentile(times, 0.99),
    max: times[times.length - 1] ?? NaN,
    create: { p50: percentile(answered, 0.5), max: answered[answered.length - 1] ?? NaN },
    bytesPerSubscriber,
    missing,
  }
}

function line(r: Run): string {
  const ms = (n: number) => n.toFixed(0)
  return (
    `  ${r.name.padEnd(6)} ${r.transport.padEnd(9)} ${r.subscribers.toLocaleString('en-US').padStart(6)} subscribers: delivery ` +
    `p50 ${ms(r.p50)} / p99 ${ms(r.p99)} / max ${ms(r.max)} ms; create answered p50 ${ms(r.create.p50)} / max ` +
    `${ms(r.create.max)} ms; ${(r.bytesPerSubscriber / 1024).toFixed(1)} KiB RSS per idle subscriber` +
    (r.missing > 0 ? `; ${r.missing} FRAMES MISSING` : '')
  )
}

/**
 * 10,000 subscribers (BENCH_RT_SUBSCRIBERS) per transport, 20 creates 500 ms apart; baseline 1,000
 * subscribers on the same server in the same run. Target: p99 delivery under 100 ms, every frame delivered.
 */
export async function benchRealtime(): Promise<{ ok: boolean }> {
  const plinth = await startPlinth({ PASSWORD_HASH_ITERATIONS: '1000', AUTH_RATE_LIMIT: '1000000' })
  const floorPort = await freePort()
  const floor = await startChild(
    [new URL('./servers/realtime-floor.mjs', import.meta.url).pathname],
    { PORT: String(floorPort) },
    floorPort,
    '/health',
  )
  let ok = true
  let round = 0
  try {
    const { tokens } = await setUp(plinth)
    const readers = tokens.slice(1)
    const subject: Target = {
      name: 'plinth',
      child: plinth,
      path: '/api/v1/collections/items/stream',
      tokenOf: (i) => readers[i % readers.length]!,
      create: (n, i) =>
        api(plinth.url, tokens[0]!, 'POST', '/api/v1/collections/items/records', {
          title: `rt-${n}`,
          status: 'open',
          secret: 's',
          rank: i,
        }),
    }
    const bare: Target = {
      name: 'floor',
      child: floor,
      path: '/stream',
      tokenOf: () => 'none',
      create: (n) => fetch(`${floor.url}/fire?n=${n}`, { method: 'POST' }).then((r) => r.text()),
    }
    console.log(
      `realtime fan-out: ${creates} creates ${gapMs} ms apart, ${users} readers in 3 roles; delivery = frame read − create sent`,
    )
    for (const transport of transports) {
      await run(subject, transport, Math.min(200, baselineSubscribers), round++) // warm-up, discarded
      const base = await run(subject, transport, baselineSubscribers, round++)
      const bottom = await run(bare, transport, subscribers, round++)
      const full = await run(subject, transport, subscribers, round++)
      for (const r of [base, bottom, full]) console.log(line(r))
      const met = full.p99 < targetP99Ms && full.missing === 0 && base.missing === 0
      console.log(
        `  ${transport}: p99 ${(full.p99 / bottom.p99).toFixed(2)}× the floor's, ${(full.p99 / base.p99).toFixed(2)}× ` +
          `Plinth's at ${baselineSubscribers.toLocaleString('en-US')}; target p99 < ${targetP99Ms} ms ` +
          (met ? 'OK' : 'NOT MET') +
          (bottom.p99 >= targetP99Ms ? ' (the floor itself misses it on this machine now)' : ''),
      )
      if (!met) ok = false
    }
    return { ok }
  } finally {
    await Promise.all([plinth.stop(), floor.stop()])
  }
}
