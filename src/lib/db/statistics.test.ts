import { describe, expect, it } from 'vitest'
import type { DbHandle } from './handle.js'
import { createStatisticsPacer } from './statistics.js'

const handle = (name: string) => ({ kind: 'sqlite', db: {}, schema: name }) as unknown as DbHandle

describe('createStatisticsPacer', () => {
  it('refreshes after 1,000 rows, then each time the table took as many again (doubling)', async () => {
    const refreshed: number[] = []
    let total = 0
    const pacer = createStatisticsPacer(async () => void refreshed.push(total))
    const main = handle('a')
    for (let chunk = 0; chunk < 100; chunk++) {
      total += 1000
      await pacer.wrote(main, 't', 1000, () => {})
    }
    expect(refreshed).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 64000])
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
