import { describe, expect, it } from 'vitest'
import { createLoggers, requestLineWriter, type RequestLine } from './log.js'

function capture(level = 'info') {
  const lines: string[] = []
  const { access } = createLoggers(level, { write: (line: string) => void lines.push(line) })
  return { access, lines }
}

// pino's own time differs by the millisecond it ran in; everything else must be the same bytes.
const withoutTime = (line: string) => line.replace(/"time":\d+,/, '')

describe('requestLineWriter', () => {
  const cases: RequestLine[] = [
    { reqId: '0f8e2c1a-0000-4000-8000-000000000000', method: 'GET', path: '/api/v1/items', status: 200, ms: 1.3 },
    { reqId: 'client.id:1', method: 'POST', path: '/a"b\\c\u0001\u2028é/𝄞', status: 0, ms: 0 },
    { reqId: 'x', method: undefined, path: '/', status: 413, ms: 12 },
  ]

  it.each(cases)('writes what pino writes for the same fields (%o)', (line) => {
    const fast = capture()
    requestLineWriter(fast.access)(line)
    const slow = capture()
    slow.access.info({ ...line }, 'request')
    expect(fast.lines).toHaveLength(1)
    expect(withoutTime(fast.lines[0]!)).toBe(withoutTime(slow.lines[0]!))
    expect(JSON.parse(fast.lines[0]!)).toMatchObject({
      level: 30,
      msg: 'request',
      path: line.path,
      status: line.status,
    })
  })

  it('writes nothing when the level leaves info out', () => {
    const quiet = capture('warn')
    requestLineWriter(quiet.access)(cases[0]!)
    expect(quiet.lines).toEqual([])
  })
})
