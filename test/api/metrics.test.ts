import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { activeFlow, executeToEnd, type Call } from './automate-support.js'
import { createCollection, createRecord, recordsPath } from './records-fixtures.js'

// GET /metrics (issue 31 item 4): off unless METRICS_TOKEN is set, then behind that bearer token; requests
// counted by route template (never a raw path) and status, latency histograms, flow runs, realtime streams,
// the process; the answer is valid Prometheus text exposition format 0.0.4.

const token = 'metrics-token-0123456789abcdef'

// ---------------------------------------------------------------------------------------------------------
// A checker of the text format (what Prometheus's parser refuses, it refuses), and the parsed samples.

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const labelPair = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(?:,|$)/

function parseValue(text: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY
  if (text === '-Inf') return Number.NEGATIVE_INFINITY
  if (text === 'NaN') return Number.NaN
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`bad value ${text}`)
  return Number(text)
}

function parseLabels(text: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {}
  let rest = text ?? ''
  while (rest !== '') {
    const m = labelPair.exec(rest)
    if (!m) throw new Error(`bad labels {${text}}`)
    if (m[1]! in labels) throw new Error(`label ${m[1]} twice in {${text}}`)
    labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
    rest = rest.slice(m[0].length)
  }
  return labels
}

/** Parses the exposition text, throwing at the first thing the format does not allow. */
function parseExposition(text: string): { types: Map<string, string>; samples: Sample[] } {
  if (!text.endsWith('\n')) throw new Error('the text must end with a line feed')
  const types = new Map<string, string>()
  const helps = new Set<string>()
  const samples: Sample[] = []
  const seen = new Set<string>()
  const closed = new Set<string>() // families whose samples have ended: each family is one group
  let current: string | null = null
  for (const line of text.slice(0, -1).split('\n')) {
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line)
    if (meta) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string]
      if (!metricName.test(name)) throw new Error(`bad metric name ${name}`)
      if (kind === 'TYPE') {
        if (types.has(name)) throw new Error(`TYPE of ${name} twice`)
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest)) throw new Error(`bad type ${rest}`)
        types.set(name, rest)
      } else {
        if (helps.has(name)) throw new Error(`HELP of ${name} twice`)
        helps.add(name)
      }
      if (current !== name && current !== null) closed.add(current)
      if (closed.has(name)) throw new Error(`${name} is not one group`)
      current = name
      continue
    }
    if (line.startsWith('#') || line === '') continue
    const m = sampleLine.exec(line)
    if (!m) throw new Error(`bad line: ${line}`)
    const name = m[1]!
    const family = types.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '')
    if (types.get(family) === undefined) throw new Error(`sample ${name} before (or without) its TYPE`)
    if (family !== current) throw new Error(`sample ${name} outside its family's group`)
    const labels = parseLabels(m[2])
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`
    if (seen.has(key)) throw new Error(`series twice: ${line}`)
    seen.add(key)
    samples.push({ name, labels, value: parseValue(m[3]!) })
  }
  for (const [family, type] of types) if (type === 'histogram') checkHistogram(family, samples)
  return { types, samples }
}

/** Each series of a histogram: ascending `le` bounds ending at +Inf, cumulative counts, +Inf equal to _count. */
function checkHistogram(family: string, samples: Sample[]): void {
  const seriesKey = (labels: Record<string, string>) =>
    JSON.stringify(
      Object.entries(labels)
        .filter(([k]) => k !== 'le')
        .sort(),
    )
  const buckets = new Map<string, { le: number; value: number }[]>()
  for (const s of samples.filter((s) => s.name === `${family}_bucket`)) {
    if (s.labels.le === undefined) throw new Error(`${family}_bucket without le`)
    const key = seriesKey(s.labels)
    buckets.set(key, [...(buckets.get(key) ?? []), { le: parseValue(s.labels.le), value: s.value }])
  }
  for (const [key, list] of buckets) {
    for (let i = 1; i < list.length; i++) {
      if (!(list[i]!.le > list[i - 1]!.le)) throw new Error(`${family}${key}: le not ascending`)
      if (list[i]!.value < list[i - 1]!.value) throw new Error(`${family}${key}: buckets not cumulative`)
    }
    if (list.at(-1)!.le !== Number.POSITIVE_INFINITY) throw new Error(`${family}${key}: no +Inf bucket`)
    const count = samples.find((s) => s.name === `${family}_count` && seriesKey(s.labels) === key)
    const sum = samples.find((s) => s.name === `${family}_sum` && seriesKey(s.labels) === key)
    if (!count || !sum) throw new Error(`${family}${key}: _count or _sum missing`)
    if (count.value !== list.at(-1)!.value) throw new Error(`${family}${key}: +Inf bucket is not _count`)
  }
}

describe('the exposition checker', () => {
  it('refuses what the format does not allow', () => {
    const ok = '# HELP a_total A.\n# TYPE a_total counter\na_total{x="1"} 2\n'
    expect(parseExposition(ok).samples).toEqual([{ name: 'a_total', labels: { x: '1' }, value: 2 }])
    for (const bad of [
      '# TYPE a counter\na 1', // no final line feed
      'a 1\n', // no TYPE
      '# TYPE a counter\na{x=1} 1\n', // unquoted label value
      '# TYPE a counter\na 1\na 2\n', // the same series twice
      '# TYPE a counter\na one\n',
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n', // not cumulative
      '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n', // +Inf is not _count
      '# TYPE a gauge\n# TYPE b gauge\nb 1\na 1\n', // a sample outside its group
    ])
      expect(() => parseExposition(bad), bad).toThrow()
  })
})

// ---------------------------------------------------------------------------------------------------------

describe('GET /metrics without METRICS_TOKEN', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('is off: 404 not_found, with or without a token', async () => {
    for (const headers of [{}, { authorization: `Bearer ${token}` }] as Record<string, string>[]) {
      const reply = await server.request('GET', '/metrics', { headers })
      expect(reply.status).toBe(404)
      expect(reply.body).toMatchObject({ error: 'not_found' })
    }
  })
})

describe('METRICS_TOKEN', () => {
  it('is refused when short or with spaces, and the message does not show it', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'plinth-metrics-'))
    try {
      for (const value of ['too-short', 'sixteen chars but spaces'])
        expect(() => loadConfig({ DATA_DIR: dataDir, METRICS_TOKEN: value })).toThrow(
          new RegExp(`METRICS_TOKEN: .*\\(got ${value.length} characters\\)`),
        )
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

describe('GET /metrics with METRICS_TOKEN', () => {
  let server: TestServer
  let owner: Account
  beforeAll(async () => {
    server = await startServer({ METRICS_TOKEN: token })
    owner = await signUpOwner(server)
  })
  afterAll(async () => {
    await server?.stop()
  })

  const scrape = () => server.request('GET', '/metrics', { token })

  /**
   * Scrapes until `ready` holds: a request is counted when its connection reports the answer sent, which
   * may come a moment after the client has read it. Every scrape is checked against the format.
   */
  async function scrapeUntil(ready: (samples: Sample[]) => boolean): Promise<Sample[]> {
    for (let attempt = 0; ; attempt++) {
      const reply = await scrape()
      expect(reply.status, reply.text).toBe(200)
      const { samples } = parseExposition(reply.text)
      if (ready(samples)) return samples
      if (attempt > 200) throw new Error(`never ready:\n${reply.text}`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  const valueOf = (samples: Sample[], name: string, labels: Record<string, string>): number | undefined =>
    samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value

  it('refuses a missing, wrong or non-bearer token with 401 unauthorized', async () => {
    const cases: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong-token-0123456789abcdef' },
      { authorization: `Bearer ${token}x` },
      { authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` },
      { authorization: token },
    ]
    for (const headers of cases) {
      const reply = await server.request('GET', '/metrics', { headers })
      expect(reply.status, JSON.stringify(headers)).toBe(401)
      expect(reply.body).toMatchObject({ error: 'unauthorized' })
      expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer/)
    }
    expect((await server.request('GET', `/metrics?token=${token}`)).status).toBe(401)
  })

  it('answers text format 0.0.4 with the token, and is not part of the API document', async () => {
    const reply = await scrape()
    expect(reply.status).toBe(200)
    expect(reply.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    const { types, samples } = parseExposition(reply.text)
    expect(Object.fromEntries(types)).toMatchObject({
      plinth_http_requests_total: 'counter',
      plinth_http_request_duration_seconds: 'histogram',
      plinth_flow_runs_active: 'gauge',
      plinth_flow_runs_ended_total: 'counter',
      plinth_realtime_streams: 'gauge',
      plinth_queue_jobs: 'gauge',
      process_resident_memory_bytes: 'gauge',
      process_cpu_seconds_total: 'counter',
      nodejs_eventloop_lag_p99_seconds: 'gauge',
      nodejs_active_resources: 'gauge',
    })
    expect(valueOf(samples, 'process_resident_memory_bytes', {})).toBeGreaterThan(0)
    expect(valueOf(samples, 'process_cpu_seconds_total', {})).toBeGreaterThan(0)
    expect(valueOf(samples, 'plinth_info', {})).toBe(1)
    const spec = await server.request('GET', '/api/openapi.json')
    expect(Object.keys(spec.body.paths)).not.toContain('/metrics')
    // The token is never written to the log.
    expect(server.logs.join('')).not.toContain(token)
  })

  it('counts requests by route template and status, never by raw path', async () => {
    await createCollection(server, owner.token, 'gauges', [{ name: 'title', type: 'text', required: true }])
    const record = await createRecord(server, owner.token, 'gauges', { title: 'one' })
    const recordPath = recordsPath('gauges', record.id)
    expect((await server.request('GET', recordPath, { token: owner.token })).status).toBe(200)
    expect((await server.request('GET', recordPath, { token: owner.token })).status).toBe(200)
    const missing = recordsPath('gauges', 'rec_doesnotexist000000')
    expect((await server.request('GET', missing, { token: owner.token })).status).toBe(404)
    const stray = `/no-such-place/${record.id}`
    expect((await server.request('GET', stray)).status).toBe(404)
    // A deprecated alias counts as the route it stands for.
    expect(
      (await server.request('GET', `/api/collections/gauges/records/${record.id}`, { token: owner.token })).status,
    ).toBe(200)

    const route = '/api/v1/collections/{name}/records/{id}'
    const samples = await scrapeUntil(
      (s) =>
        valueOf(s, 'plinth_http_requests_total', { method: 'GET', route, status: '200' }) === 3 &&
        valueOf(s, 'plinth_http_requests_total', { route: 'unmatched', status: '404' }) !== undefined,
    )
    expect(valueOf(samples, 'plinth_http_requests_total', { method: 'GET', route, status: '404' })).toBe(1)
    expect(
      valueOf(samples, 'plinth_http_requests_total', {
        method: 'POST',
        route: '/api/v1/collections/{name}/records',
        status: '201',
      }),
    ).toBe(1)
    expect(
      valueOf(samples, 'plinth_http_requests_total', {
        method: 'POST',
        route: '/api/auth/sign-up/email',
        status: '200',
      }),
    ).toBe(1)
    expect(valueOf(samples, 'plinth_http_requests_total', { route: '/metrics', status: '401' })).toBeGreaterThan(0)

    // No label carries a raw path: no id, no collection name, no unknown path.
    const labelValues = samples.flatMap((s) => Object.values(s.labels))
    for (const raw of [record.id, 'gauges', 'rec_doesnotexist000000', 'no-such-place'])
      expect(labelValues.filter((v) => v.includes(raw))).toEqual([])
    for (const s of samples.filter((s) => s.name === 'plinth_http_requests_total'))
      expect(s.labels.route === 'unmatched' || s.labels.route!.startsWith('/'), s.labels.route).toBe(true)
  })

  it("has one latency histogram per route whose _count is that route's request count", async () => {
    await server.request('GET', '/health')
    const samples = await scrapeUntil(
      (s) => valueOf(s, 'plinth_http_request_duration_seconds_count', { method: 'GET', route: '/health' }) === 1,
    )
    const counts = samples.filter((s) => s.name === 'plinth_http_request_duration_seconds_count')
    expect(counts.length).toBeGreaterThan(3)
    for (const count of counts) {
      const requests = samples
        .filter(
          (s) =>
            s.name === 'plinth_http_requests_total' &&
            s.labels.method === count.labels.method &&
            s.labels.route === count.labels.route,
        )
        .reduce((sum, s) => sum + s.value, 0)
      expect(count.value, `${count.labels.method} ${count.labels.route}`).toBe(requests)
    }
    const healthBuckets = samples.filter(
      (s) => s.name === 'plinth_http_request_duration_seconds_bucket' && s.labels.route === '/health',
    )
    expect(healthBuckets.map((s) => s.labels.le)).toEqual([
      '0.005',
      '0.01',
      '0.025',
      '0.05',
      '0.1',
      '0.25',
      '0.5',
      '1',
      '2.5',
      '5',
      '10',
      '+Inf',
    ])
  })

  it('counts flow runs by status after a manual flow ran', async () => {
    const call: Call = (method, path, body) => server.request(method, path, { token: owner.token, body })
    const before = await scrapeUntil(() => true)
    const completedBefore = valueOf(before, 'plinth_flow_runs_ended_total', { status: 'completed' }) ?? 0
    const flowId = await activeFlow(call, 'metrics flow', [
      { key: 'a', type: 'set_variable', config: { key: 'x', value: 1 } },
    ])
    const run = await executeToEnd(call, call, flowId)
    expect(run.status).toBe('completed')
    const samples = await scrapeUntil(() => true)
    expect(valueOf(samples, 'plinth_flow_runs_ended_total', { status: 'completed' })).toBe(completedBefore + 1)
    expect(valueOf(samples, 'plinth_flow_runs_active', { status: 'pending' })).toBe(0)
    expect(valueOf(samples, 'plinth_flow_runs_active', { status: 'running' })).toBe(0)
  })

  it('shows each background queue by state, idle ones at zero', async () => {
    const samples = await scrapeUntil(() => true)
    const queues = samples.filter((s) => s.name === 'plinth_queue_jobs')
    // The hourly blueprint sweep's queue is defined by every instance; at rest it holds no job.
    for (const state of ['waiting', 'delayed', 'active']) {
      expect(valueOf(samples, 'plinth_queue_jobs', { queue: 'blueprint-installs', state })).toBe(0)
    }
    const names = new Set(queues.map((s) => s.labels.queue))
    expect(names.size).toBeGreaterThan(1)
    expect(queues).toHaveLength(names.size * 3)
  })

  it('shows the realtime streams open on this instance', async () => {
    const controller = new AbortController()
    const res = await fetch(`${server.url}/api/v1/collections/gauges/stream`, {
      headers: { authorization: `Bearer ${owner.token}` },
      signal: controller.signal,
    })
    expect(res.status).toBe(200)
    try {
      const samples = await scrapeUntil((s) => valueOf(s, 'plinth_realtime_streams', {}) === 1)
      expect(valueOf(samples, 'plinth_realtime_streams', {})).toBe(1)
    } finally {
      controller.abort()
    }
    await scrapeUntil((s) => valueOf(s, 'plinth_realtime_streams', {}) === 0)
  })
})
