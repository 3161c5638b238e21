import { describe, expect, it } from 'vitest'
import { createCounter, createHistogram, escapeLabel, formatNumber, writeFamily, writeHistogram } from './exposition.js'

describe('exposition', () => {
  it.each([
    ['plain', 'plain'],
    ['a"b', 'a\\"b'],
    ['a\\b', 'a\\\\b'],
    ['a\nb', 'a\\nb'],
  ])('escapes the label value %j as %j', (value, escaped) => {
    expect(escapeLabel(value)).toBe(escaped)
  })

  it.each([
    [1, '1'],
    [0.005, '0.005'],
    [Number.POSITIVE_INFINITY, '+Inf'],
    [Number.NEGATIVE_INFINITY, '-Inf'],
    [Number.NaN, 'NaN'],
  ])('writes %s as %s', (value, text) => {
    expect(formatNumber(value)).toBe(text)
  })

  it('writes a counter family, one line per series', () => {
    const counter = createCounter(['route', 'status'])
    counter.inc(['/a', '200'])
    counter.inc(['/a', '200'])
    counter.inc(['/b', '404'], 3)
    const out: string[] = []
    writeFamily(out, 'x_total', 'counter', 'Things.\nMore.', counter.series())
    expect(out).toEqual([
      '# HELP x_total Things.\\nMore.',
      '# TYPE x_total counter',
      'x_total{route="/a",status="200"} 2',
      'x_total{route="/b",status="404"} 3',
    ])
  })

  it('writes cumulative histogram buckets ending at +Inf, then _sum and _count', () => {
    const histogram = createHistogram(['route'], [0.1, 1])
    for (const v of [0.05, 0.5, 0.5, 5]) histogram.observe(['/a'], v)
    const out: string[] = []
    writeHistogram(out, 'h_seconds', 'Latency.', histogram)
    expect(out).toEqual([
      '# HELP h_seconds Latency.',
      '# TYPE h_seconds histogram',
      'h_seconds_bucket{route="/a",le="0.1"} 1',
      'h_seconds_bucket{route="/a",le="1"} 3',
      'h_seconds_bucket{route="/a",le="+Inf"} 4',
      'h_seconds_sum{route="/a"} 6.05',
      'h_seconds_count{route="/a"} 4',
    ])
  })
})
