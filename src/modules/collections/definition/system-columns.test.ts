import { describe, expect, it } from 'vitest'
import { isSystemColumn, systemColumns } from './system-columns.js'

describe('system columns', () => {
  it('lists the spec columns with their types per dialect', () => {
    const rows = systemColumns.map((c) => [
      c.name,
      c.type.sqlite,
      c.type.postgres,
      c.primaryKey,
      c.notNull,
      c.defaultValue ?? null,
    ])
    expect(rows).toEqual([
      ['id', 'TEXT', 'text', true, true, null],
      ['created_at', 'INTEGER', 'bigint', false, true, null],
      ['updated_at', 'INTEGER', 'bigint', false, true, null],
      ['created_by', 'TEXT', 'text', false, false, null],
      ['updated_by', 'TEXT', 'text', false, false, null],
      ['deleted_at', 'INTEGER', 'bigint', false, false, null],
      ['_version', 'INTEGER', 'integer', false, true, 1],
      ['owned_by', 'TEXT', 'text', false, false, null],
    ])
  })

  it('gives filters a kind for each', () => {
    expect(Object.fromEntries(systemColumns.map((c) => [c.name, c.valueKind]))).toEqual({
      id: 'text',
      created_at: 'integer',
      updated_at: 'integer',
      created_by: 'text',
      updated_by: 'text',
      deleted_at: 'integer',
      _version: 'integer',
      owned_by: 'text',
    })
  })

  it('answers isSystemColumn', () => {
    expect(isSystemColumn('owned_by')).toBe(true)
    expect(isSystemColumn('owner')).toBe(false)
  })
})
