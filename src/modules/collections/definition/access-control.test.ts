import { describe, expect, it } from 'vitest'
import { AccessControlSchema } from './access-control.js'

const rows: [unknown, boolean][] = [
  [null, true],
  [{ preset: 'private' }, true],
  [{ preset: 'team', sharing: false }, true],
  [{ preset: 'public', sharing: true }, true],
  [{ preset: 'secret' }, false],
  [{}, false],
  [{ preset: 'private', sharing: 'yes' }, false],
  [{ preset: 'private', extra: 1 }, false],
  ['private', false],
  [undefined, false],
]

describe('AccessControlSchema', () => {
  it.each(rows)('%j → %s', (input, valid) => {
    expect(AccessControlSchema.safeParse(input).success).toBe(valid)
  })
})
