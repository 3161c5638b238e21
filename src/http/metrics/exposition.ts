/**
 * The Prometheus text exposition format, version 0.0.4, written by hand: a family is `# HELP` and
 * `# TYPE` lines, then one `name{label="value"} number` line per series. Counters and histograms keep
 * their series in maps keyed by their label values; callers keep the label values bounded.
 */

export const contentType = 'text/plain; version=0.0.4; charset=utf-8'

export type MetricType = 'counter' | 'gauge' | 'histogram'

/** One series of a counter or gauge: its label values, by name, and its value. */
export interface Series {
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/** A counter whose series are named by the values of `labelNames`, in that order. */
export interface Counter {
  inc(values: readonly string[], by?: number): void
  series(): Series[]
}

export interface HistogramSeries {
  readonly labels: Readonly<Record<string, string>>
  /** Observations at or under each bound of `buckets`, cumulative, in the order of the bounds. */
  readonly cumulative: readonly number[]
  readonly sum: number
  readonly count: number
}

export interface Histogram {
  readonly buckets: readonly number[]
  observe(values: readonly string[], value: number): void
  series(): HistogramSeries[]
}

/** A counter over the given label names. */
export function createCounter(labelNames: readonly string[]): Counter {
  const entries = new Map<string, { values: readonly string[]; value: number }>()
  return {
    inc(values, by = 1) {
      const key = values.join('\u0000')
      const entry = entries.get(key)
      if (entry) entry.value += by
      else entries.set(key, { values: [...values], value: by })
    },
    series: () => [...entries.values()].map((e) => ({ labels: labelsOf(labelNames, e.values), value: e.value })),
  }
}

/** A histogram over the given label names with these upper bounds (ascending; `+Inf` is added). */
export function createHistogram(labelNames: readonly string[], buckets: readonly number[]): Histogram {
  // Per series, the count of each bucket on its own; made cumulative when rendered.
  const entries = new Map<string, { values: readonly string[]; counts: number[]; sum: number; count: number }>()
  return {
    buckets,
    observe(values, value) {
      const key = values.join('\u0000')
      let entry = entries.get(key)
      if (!entry) {
        entry = { values: [...values], counts: buckets.map(() => 0), sum: 0, count: 0 }
        entries.set(key, entry)
      }
      const index = buckets.findIndex((bound) => value <= bound)
      if (index !== -1) entry.counts[index]! += 1
      entry.sum += value
      entry.count += 1
    },
    series: () =>
      [...entries.values()].map((e) => {
        let running = 0
        return {
          labels: labelsOf(labelNames, e.values),
          cumulative: e.counts.map((n) => (running += n)),
          sum: e.sum,
          count: e.count,
        }
      }),
  }
}

function labelsOf(names: readonly string[], values: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.map((name, i) => [name, values[i] ?? '']))
}

/** Appends a counter or gauge family (its HELP and TYPE even when it has no series yet). */
export function writeFamily(out: string[], name: string, type: MetricType, help: string, series: Series[]): void {
  out.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`)
  for (const s of series) out.push(`${name}${labelText(s.labels)} ${formatNumber(s.value)}`)
}

/** Appends a histogram family: `_bucket` lines (cumulative, ending with `le="+Inf"`), `_sum` and `_count`. */
export function writeHistogram(out: string[], name: string, help: string, histogram: Histogram): void {
  out.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} histogram`)
  for (const s of histogram.series()) {
    histogram.buckets.forEach((bound, i) => {
      out.push(`${name}_bucket${labelText({ ...s.labels, le: formatNumber(bound) })} ${s.cumulative[i]}`)
    })
    out.push(`${name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.count}`)
    out.push(`${name}_sum${labelText(s.labels)} ${formatNumber(s.sum)}`)
    out.push(`${name}_count${labelText(s.labels)} ${s.count}`)
  }
}

function labelText(labels: Readonly<Record<string, string>>): string {
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${escapeLabel(value)}"`)
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`
}

/** A label value: backslash, double quote and line feed escaped (the format's three). */
export function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
}

/** A sample value as Prometheus reads it (Go's float syntax: `+Inf`, `-Inf`, `NaN`). */
export function formatNumber(value: number): string {
  if (Number.isFinite(value)) return String(value)
  return Number.isNaN(value) ? 'NaN' : value > 0 ? '+Inf' : '-Inf'
}
