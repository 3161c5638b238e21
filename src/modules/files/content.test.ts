import { describe, expect, it } from 'vitest'
import { isFileHandle, isFlowKey, parseFileRef } from './content.js'

const id = '0123456789abcdef0123456789abcdef'

describe("parseFileRef: what a flow's key names (decision 040)", () => {
  it.each([
    [id, { kind: 'id', id }],
    [` ${id} `, { kind: 'id', id }],
    [`projects/p1/files/${id}/rev1/photo.png`, { kind: 'id', id, r2Key: `projects/p1/files/${id}/rev1/photo.png` }],
    [`projects/p1/files/${id}/photo.png`, { kind: 'id', id, r2Key: `projects/p1/files/${id}/photo.png` }],
    // Under a container's prefix (decision 066).
    [
      `projects/p1/files/people/avatars/${id}/photo.png`,
      { kind: 'id', id, r2Key: `projects/p1/files/people/avatars/${id}/photo.png` },
    ],
    ['report.csv', { kind: 'flow', flowKey: 'report.csv' }],
    ['reports/2026/a.csv', { kind: 'flow', flowKey: 'reports/2026/a.csv' }],
    // Not a file's own key, so a flow key (which no file holds unless a flow wrote there): variants, upload URLs' keys, upper-case ids.
    [
      `projects/p1/variants/${id}/abcd/thumbnail.png`,
      { kind: 'flow', flowKey: `projects/p1/variants/${id}/abcd/thumbnail.png` },
    ],
    [`projects/p1/uploads/${id}/photo.png`, { kind: 'flow', flowKey: `projects/p1/uploads/${id}/photo.png` }],
    [id.toUpperCase(), { kind: 'flow', flowKey: id.toUpperCase() }],
  ])('%s', (key, expected) => {
    expect(parseFileRef(key)).toEqual(expected)
    expect(isFileHandle(key)).toBe(expected.kind === 'id')
  })

  it.each([
    '',
    '../x',
    'a/../b',
    './a',
    'a/./b',
    '/abs.csv',
    'a//b.csv',
    'trailing/',
    `projects/p1/files/${id}/`,
    'with space.csv',
    'caf\u00e9.csv',
    'a\\b',
    'x'.repeat(121),
    `${'a/'.repeat(20)}b`,
    `${`${'x'.repeat(120)}/`.repeat(4)}${'x'.repeat(120)}`,
  ])('refuses %j as invalid_request', (key) => {
    expect(isFlowKey(key)).toBe(false)
    expect(() => parseFileRef(key)).toThrow(
      expect.objectContaining({ code: 'invalid_request', details: { field: 'key' } }),
    )
  })

  it('a flow key: 1-20 segments of 1-120 of [A-Za-z0-9._-], at most 500 characters', () => {
    expect(isFlowKey('a')).toBe(true)
    expect(isFlowKey('x'.repeat(120))).toBe(true)
    expect(isFlowKey(`${'a/'.repeat(19)}b`)).toBe(true)
    expect(isFlowKey(`${`${'x'.repeat(24)}/`.repeat(19)}${'x'.repeat(24)}`)).toBe(true)
    expect(isFlowKey('.hidden/..x/a.b-c_d')).toBe(true)
  })
})
