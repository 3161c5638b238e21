import { monitorEventLoopDelay } from 'node:perf_hooks'
import { writeFamily } from './exposition.js'

/**
 * The process's own figures, under the names Prometheus's client libraries use (`process_*`, `nodejs_*`),
 * so existing dashboards read them: memory, CPU seconds, start time, open resources and event-loop delay.
 * The delay is sampled continuously (every 20 ms) and its percentiles start afresh after each scrape, so a
 * scrape shows the delay since the one before.
 */
export function createProcessMetrics() {
  const delay = monitorEventLoopDelay({ resolution: 20 })
  delay.enable()
  const startSeconds = Math.round((Date.now() - performance.now()) / 1000)

  return {
    write(out: string[]): void {
      const memory = process.memoryUsage()
      const cpu = process.cpuUsage()
      writeFamily(out, 'process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.', [
        { labels: {}, value: memory.rss },
      ])
      writeFamily(out, 'nodejs_heap_size_used_bytes', 'gauge', 'V8 heap in use, in bytes.', [
        { labels: {}, value: memory.heapUsed },
      ])
      writeFamily(out, 'nodejs_heap_size_total_bytes', 'gauge', 'V8 heap reserved, in bytes.', [
        { labels: {}, value: memory.heapTotal },
      ])
      writeFamily(out, 'process_cpu_user_seconds_total', 'counter', 'User CPU time spent, in seconds.', [
        { labels: {}, value: cpu.user / 1e6 },
      ])
      writeFamily(out, 'process_cpu_system_seconds_total', 'counter', 'System CPU time spent, in seconds.', [
        { labels: {}, value: cpu.system / 1e6 },
      ])
      writeFamily(out, 'process_cpu_seconds_total', 'counter', 'User and system CPU time spent, in seconds.', [
        { labels: {}, value: (cpu.user + cpu.system) / 1e6 },
      ])
      writeFamily(out, 'process_start_time_seconds', 'gauge', 'Start time of the process, in Unix seconds.', [
        { labels: {}, value: startSeconds },
      ])
      writeFamily(
        out,
        'nodejs_active_resources',
        'gauge',
        'Resources keeping the event loop alive (sockets, timers, file handles).',
        [{ labels: {}, value: process.getActiveResourcesInfo().length }],
      )
      // The histogram reads in nanoseconds; before its first sample its percentiles are 0 and its min huge.
      const seconds = (ns: number) => (delay.count === 0 ? 0 : ns / 1e9)
      writeFamily(out, 'nodejs_eventloop_lag_p50_seconds', 'gauge', 'Median event-loop delay since the last scrape.', [
        { labels: {}, value: seconds(delay.percentile(50)) },
      ])
      writeFamily(
        out,
        'nodejs_eventloop_lag_p99_seconds',
        'gauge',
        '99th percentile event-loop delay since the last scrape.',
        [{ labels: {}, value: seconds(delay.percentile(99)) }],
      )
      writeFamily(out, 'nodejs_eventloop_lag_max_seconds', 'gauge', 'Longest event-loop delay since the last scrape.', [
        { labels: {}, value: seconds(delay.max) },
      ])
      delay.reset()
    },
    close(): void {
      delay.disable()
    },
  }
}
