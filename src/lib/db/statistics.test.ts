import { describe, expect, it } from 'vitest'
import type { DbHandle } from './handle.js'
import { createStatisticsPacer } from './statistics.js'

const handle = (name: string) => ({ kind: 'sqlite', db: {}, schema: name }) as unknown as DbHandle

describe('createStatisticsPacer', () => {
  it('refreshes after 1,000 rows, then each time the table took a quarter more (and at least 1,000)', async () => {
    const refreshed: number[] = []
    let total = 0
    const pacer = createStatisticsPacer(async () => void refreshed.push(total))
    const main = handle('a')
    for (let chunk = 0; chunk < 100; chunk++) {
      total += 1000
      await pacer.wrote(main, 't', 1000, () => {})
    }
    // Never more than 25% behind: each refresh at most 1.25× the last once past 4,000 rows.
    expect(refreshed.slice(0, 6)).toEqual([1000, 2000, 3000, 4000, 5000, 7000])
    for (let i = 4; i < refreshed.length; i++) expect(refreshed[i]! / refreshed[i - 1]!).toBeLessThanOrEqual(1.25 + 0.2)
    expect(refreshed.length).toBeLessThan(20)
    expect(refreshed.at(-1)).toBeGreaterThanOrEqual(100_000 / 1.25 - 1000)
  })

  it('adds up small writes; counts each table of each database apart; ignores nothing written', async () => {
    const refreshed: string[] = []
    const pacer = createStatisticsPacer(async (h, table) => void refreshed.push(`${h.schema}.${table}`))
    const [a, b] = [handle('a'), handle('b')]
    for (let i = 0; i < 9; i++) await pacer.wrote(a, 't', 100, () => {})
    await pacer.wrote(b, 't', 999, () => {})
    await pacer.wrote(a, 'u', 0, () => {})
    expect(refreshed).toEqual([])
    await pacer.wrote(a, 't', 100, () => {})
    expect(refreshed).toEqual(['a.t'])
  })

  it('a failed refresh is reported, not thrown', async () => {
    const errors: unknown[] = []
    const pacer = createStatisticsPacer(async () => {
      throw new Error('no')
    })
    await pacer.wrote(handle('a'), 't', 5000, (err) => errors.push(err))
    expect(errors).toHaveLength(1)
  })
})
