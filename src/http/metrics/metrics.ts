import type { QueueDepth } from '../../lib/queue/index.js'
import type { RequestSample } from '../transport.js'
import { createCounter, createHistogram, writeFamily, writeHistogram, type Series } from './exposition.js'
import { createProcessMetrics } from './process.js'
import { createRouteLabels, methodLabel, unmatchedRoute } from './route-label.js'

/** Where the figures that are not counted here come from; each is read at scrape time. */
export interface MetricsSources {
  /** Realtime streams (SSE and WebSocket) this instance serves now. */
  realtimeStreams(): number
  /** Pending and running flow runs of every project, by status: the shared runs store, the same from every instance. */
  activeRuns(): Promise<Readonly<Record<string, number>>>
  /** Flow runs this instance ended since it started, by final status. */
  endedRuns(): Readonly<Record<string, number>>
  /** Unfinished jobs of each queue this instance defined, by state (shared queues: the same from every instance). */
  queueDepth(): Promise<readonly QueueDepth[]>
}

/**
 * Request latency buckets, in seconds: Prometheus's defaults (5 ms to 10 s). Long-lived answers (event
 * streams, WebSockets) count when they end and land in `+Inf`.
 */
export const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const

export type Metrics = ReturnType<typeof createMetrics>

/**
 * This instance's metrics in the Prometheus text format: requests by route template and status, request
 * latency by route, flow runs, realtime streams, the process. Each instance counts its own requests;
 * Prometheus scrapes every instance and sums.
 */
export function createMetrics(options: { version: string; sources: MetricsSources }) {
  const requests = createCounter(['method', 'route', 'status'])
  const latency = createHistogram(['method', 'route'], latencyBuckets)
  const processMetrics = createProcessMetrics()
  let labelOf: ((method: string | undefined, path: string) => string) | null = null

  return {
    /** Gives the app's route table (app.routes), once the app is assembled; until then every request is `unmatched`. */
    useRoutes(routes: readonly { method: string; path: string }[]): void {
      labelOf = createRouteLabels(routes)
    },

    /** Counts one answered request (the transport calls it, with the access log line). */
    observe: (sample: RequestSample): void => {
      const method = methodLabel(sample.method)
      const route = labelOf ? labelOf(sample.method, sample.path) : unmatchedRoute
      // 0: the client went away before the answer was complete (as in the access log).
      requests.inc([method, route, String(sample.status)])
      latency.observe([method, route], sample.seconds)
    },

    /** The exposition text. */
    async render(): Promise<string> {
      const out: string[] = []
      writeFamily(out, 'plinth_info', 'gauge', 'Always 1; the version of Plinth as a label.', [
        { labels: { version: options.version }, value: 1 },
      ])
      writeFamily(
        out,
        'plinth_http_requests_total',
        'counter',
        'HTTP requests answered by this instance, by method, route template and status (0: the client left first).',
        requests.series(),
      )
      writeHistogram(
        out,
        'plinth_http_request_duration_seconds',
        'Time from a request arriving to its answer being sent, by method and route template.',
        latency,
      )
      writeFamily(
        out,
        'plinth_flow_runs_active',
        'gauge',
        'Flow runs pending or running in every project (the shared runs store: the same from every instance).',
        toSeries(await options.sources.activeRuns(), ['pending', 'running']),
      )
      writeFamily(
        out,
        'plinth_flow_runs_ended_total',
        'counter',
        'Flow runs this instance ended since it started, by final status.',
        toSeries(options.sources.endedRuns(), []),
      )
      writeFamily(
        out,
        'plinth_queue_jobs',
        'gauge',
        'Unfinished background jobs by queue and state: waiting (due), delayed (a later time or a retry backoff), active.',
        (await options.sources.queueDepth()).flatMap((d) =>
          (['waiting', 'delayed', 'active'] as const).map((state) => ({
            labels: { queue: d.queue, state },
            value: d[state],
          })),
        ),
      )
      writeFamily(
        out,
        'plinth_realtime_streams',
        'gauge',
        'Realtime streams (SSE and WebSocket) open on this instance.',
        [{ labels: {}, value: options.sources.realtimeStreams() }],
      )
      processMetrics.write(out)
      return `${out.join('\n')}\n`
    },

    /** Stops sampling the event loop. */
    close(): void {
      processMetrics.close()
    },
  }
}

/** Counts by status as series, with each of `always` present (0) so a dashboard sees the series before the first one. */
function toSeries(counts: Readonly<Record<string, number>>, always: readonly string[]): Series[] {
  const all = { ...Object.fromEntries(always.map((status) => [status, 0])), ...counts }
  return Object.entries(all).map(([status, value]) => ({ labels: { status }, value }))
}
