import { describe, expect, it } from 'vitest'
import { findSignature, zipBytes, utf8 } from '../../../test/support/zip.js'
import { extractMember, inflateStep, peekMember } from './bounded-inflate.js'
import { declaredMemberCount, readMembers, ZipUnreadable } from './central-directory.js'

describe('readMembers', () => {
  it('lists members from the central directory with their declared sizes', () => {
    const zip = zipBytes({
      'a/app.ebp.md': utf8('hello'),
      'b.txt': [utf8('x'.repeat(1000)), { level: 0 }],
      'empty/': new Uint8Array(0),
    })
    const members = readMembers(zip)
    expect(members.map((m) => [m.name, m.isDirectory, m.method, m.declaredSize])).toEqual([
      ['a/app.ebp.md', false, 8, 5],
      ['b.txt', false, 0, 1000],
      ['empty/', true, 8, 0],
    ])
    expect(declaredMemberCount(zip)).toBe(3)
  })

  it('takes the larger of the central and the local declaration', () => {
    const zip = zipBytes({ 'a.txt': utf8('hello') })
    new DataView(zip.buffer).setUint32(22, 999_999, true)
    expect(readMembers(zip)[0]!.declaredSize).toBe(999_999)
  })

  it.each([
    ['truncated', (z: Uint8Array) => z.subarray(0, z.byteLength - 10)],
    ['no end record', (z: Uint8Array) => z.subarray(0, 30)],
    [
      'a central entry out of place',
      (z: Uint8Array) => {
        const copy = z.slice()
        new DataView(copy.buffer).setUint32(findSignature(copy, 0x06054b50) + 16, 3, true)
        return copy
      },
    ],
  ])('throws ZipUnreadable when %s', (_, damage) => {
    expect(() => readMembers(damage(zipBytes({ 'a.txt': utf8('hello world') })))).toThrow(ZipUnreadable)
  })
})

describe('extractMember', () => {
  it('inflates a member and checks its CRC-32', () => {
    const zip = zipBytes({ 'a.txt': utf8('hello '.repeat(1000)) })
    const out = extractMember(zip, readMembers(zip)[0]!, 1_000_000)
    expect(out.ok && new TextDecoder().decode(out.bytes)).toBe('hello '.repeat(1000))
  })

  it('refuses a member declared over the limit before inflating it', () => {
    const zip = zipBytes({ 'a.txt': new Uint8Array(2000) })
    expect(extractMember(zip, readMembers(zip)[0]!, 1000)).toEqual({ ok: false, reason: 'too_large', produced: 0 })
  })

  it('stops a bomb within one step of the limit, whatever it declares', () => {
    const zip = zipBytes({ 'bomb.txt': [new Uint8Array(8_000_000), { level: 9 }] })
    const view = new DataView(zip.buffer)
    view.setUint32(22, 100, true)
    view.setUint32(findSignature(zip, 0x02014b50) + 24, 100, true)
    const member = readMembers(zip)[0]!
    expect(member.declaredSize).toBe(100)
    const out = extractMember(zip, member, 1_000_000)
    expect(out).toMatchObject({ ok: false, reason: 'too_large' })
    // DEFLATE expands at most 1032:1: one step past the limit, never the 8 MB the member holds.
    const produced = (out as { produced: number }).produced
    expect(produced).toBeGreaterThan(1_000_000)
    expect(produced).toBeLessThanOrEqual(1_000_000 + inflateStep * 1032)
  })

  it('reports corrupt data, a wrong size and a wrong CRC as unreadable', () => {
    const zip = zipBytes({ 'a.txt': utf8('hello '.repeat(100)) })
    const member = readMembers(zip)[0]!
    const corrupt = zip.slice()
    corrupt.fill(0xff, member.dataOffset, member.dataOffset + member.compressedSize)
    expect(extractMember(corrupt, member, 1_000_000)).toMatchObject({ ok: false, reason: 'unreadable' })
    expect(extractMember(zip, { ...member, declaredSize: 599 }, 1_000_000)).toMatchObject({
      ok: false,
      reason: 'unreadable',
    })
    expect(extractMember(zip, { ...member, crc32: member.crc32 ^ 1 }, 1_000_000)).toMatchObject({
      ok: false,
      reason: 'unreadable',
    })
    expect(extractMember(zip, { ...member, method: 12 }, 1_000_000)).toMatchObject({ ok: false, reason: 'unreadable' })
    expect(extractMember(zip, { ...member, encrypted: true }, 1_000_000)).toMatchObject({
      ok: false,
      reason: 'unreadable',
    })
  })
})

describe('peekMember', () => {
  it('reads the first bytes of a stored or deflated member without inflating the rest', () => {
    const zip = zipBytes({ 'a.bin': utf8('PK\u0003\u0004 and much more'), 'b.bin': [utf8('GIF89a'), { level: 0 }] })
    const [a, b] = readMembers(zip)
    expect(Array.from(peekMember(zip, a!, 4)!)).toEqual([0x50, 0x4b, 3, 4])
    expect(new TextDecoder().decode(peekMember(zip, b!, 3)!)).toBe('GIF')
  })
})
