import { constants, crc32, deflateRawSync, inflateRawSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { findSignature, utf8, zipBytes, zipOf } from '../../../test/support/zip.js'
import { isArchiveFault, isUnsafeName, openZip, ZipUnreadable, type ZipMember } from './read-zip.js'

const EOCD = 0x06054b50
const CENTRAL = 0x02014b50

async function membersOf(zip: Uint8Array): Promise<readonly ZipMember[]> {
  return (await openZip(zip)).readMembers()
}

/** A one-member zip whose headers are written by the test: deflated unless `method` says otherwise. */
function oneMember(text: string, over: Partial<Parameters<typeof zipOf>[0][number]> = {}): Uint8Array {
  const bytes = utf8(text)
  const method = over.method ?? 8
  return zipOf([
    {
      name: 'a.txt',
      method,
      crc32: crc32(bytes),
      declared: bytes.byteLength,
      data: method === 8 ? deflateRawSync(bytes) : bytes,
      ...over,
    },
  ])
}

describe('readMembers', () => {
  it('lists members from the central directory with their declared sizes', async () => {
    const zip = zipBytes({
      'a/app.ebp.md': utf8('hello'),
      'b.txt': [utf8('x'.repeat(1000)), { level: 0 }],
      'empty/': new Uint8Array(0),
    })
    const reader = await openZip(zip)
    expect(reader.memberCount).toBe(3)
    const members = await reader.readMembers()
    expect(members.map((m) => [m.name, m.isDirectory, m.declaredSize])).toEqual([
      ['a/app.ebp.md', false, 5],
      ['b.txt', false, 1000],
      ['empty/', true, 0],
    ])
    expect(await reader.readMembers()).toBe(members)
  })

  it('takes the larger of the central and the local declaration', async () => {
    const zip = zipBytes({ 'a.txt': utf8('hello') })
    new DataView(zip.buffer).setUint32(22, 999_999, true)
    expect((await membersOf(zip))[0]!.declaredSize).toBe(999_999)
  })

  it('reads a ZIP64 member, its sizes in its extra field', async () => {
    const zip = oneMember('hello zip64', { zip64: true })
    const reader = await openZip(zip)
    const [member] = await reader.readMembers()
    expect(member!.declaredSize).toBe(11)
    const out = await reader.extract(member!, 1000)
    expect(out.ok && new TextDecoder().decode(out.bytes)).toBe('hello zip64')
  })

  it('decodes a name as UTF-8 when bit 11 says so, else as CP437, backslashes kept', async () => {
    const names = async (name: string, flags: number) =>
      (await membersOf(zipOf([{ name, method: 0, crc32: 0, declared: 0, data: new Uint8Array(0), flags }])))[0]!.name
    expect(await names('dé.txt', 0x800)).toBe('dé.txt')
    expect(await names('dé.txt', 0)).toBe('d├⌐.txt')
    expect(await names('a\\b.txt', 0)).toBe('a\\b.txt')
  })
})

describe("yauzl's reports on a damaged archive are ZipUnreadable", () => {
  const at = (zip: Uint8Array, signature: number) => findSignature(zip, signature)
  const patch =
    (offset: (z: Uint8Array) => number, value: number, size: 2 | 4 = 4) =>
    (z: Uint8Array) => {
      const copy = z.slice()
      const view = new DataView(copy.buffer)
      if (size === 2) view.setUint16(offset(copy), value, true)
      else view.setUint32(offset(copy), value, true)
      return copy
    }
  it.each([
    ['truncated', (z: Uint8Array) => z.subarray(0, z.byteLength - 10), /End of central directory record signature/],
    ['no end record', (z: Uint8Array) => z.subarray(0, 30), /End of central directory record signature/],
    ['bytes after the end record', (z: Uint8Array) => Buffer.concat([z, Buffer.from('junk')]), /comment length/],
    ['several disks', patch((z) => at(z, EOCD) + 4, 1, 2), /multi-disk/],
    ['a central entry out of place', patch((z) => at(z, EOCD) + 16, 3), /central directory file header signature/],
    [
      'a central directory cut short',
      (z: Uint8Array) => patch((c) => at(c, EOCD) + 16, z.byteLength - 10)(z),
      /unexpected EOF/,
    ],
    ['a local header missing', patch((z) => at(z, CENTRAL) + 42, 5), /local file header signature/],
    ['data past the end', patch((z) => at(z, CENTRAL) + 20, 1_000_000), /overflows file bounds/],
    ['strong encryption', patch((z) => at(z, CENTRAL) + 8, 0x41, 2), /strong encryption/],
  ])('%s', async (_, damage, message) => {
    const zip = damage(zipBytes({ 'a.txt': utf8('hello world') }))
    const error = await membersOf(zip).catch((err: unknown) => err)
    expect(error).toBeInstanceOf(ZipUnreadable)
    expect((error as Error).message).toMatch(message)
  })
})

describe('extract', () => {
  it('inflates a member and checks its CRC-32', async () => {
    const reader = await openZip(zipBytes({ 'a.txt': utf8('hello '.repeat(1000)) }))
    const out = await reader.extract((await reader.readMembers())[0]!, 1_000_000)
    expect(out.ok && new TextDecoder().decode(out.bytes)).toBe('hello '.repeat(1000))
  })

  it('refuses a member declared over the limit before inflating it', async () => {
    const reader = await openZip(zipBytes({ 'a.txt': new Uint8Array(2000) }))
    const member = (await reader.readMembers())[0]!
    expect(await reader.extract(member, 1000)).toEqual({ ok: false, reason: 'too_large', produced: 0 })
  })

  it('stops a bomb within one inflated chunk of the limit, whatever it declares', async () => {
    const zip = zipBytes({ 'bomb.txt': [new Uint8Array(8_000_000), { level: 9 }] })
    const view = new DataView(zip.buffer)
    view.setUint32(22, 100, true)
    view.setUint32(findSignature(zip, CENTRAL) + 24, 100, true)
    const reader = await openZip(zip)
    const member = (await reader.readMembers())[0]!
    expect(member.declaredSize).toBe(100)
    const out = await reader.extract(member, 1_000_000)
    expect(out).toMatchObject({ ok: false, reason: 'too_large' })
    // zlib hands its output over a chunk (16 KiB) at a time: never the 8 MB the member holds.
    const produced = (out as { produced: number }).produced
    expect(produced).toBeGreaterThan(1_000_000)
    expect(produced).toBeLessThanOrEqual(1_000_000 + constants.Z_DEFAULT_CHUNK)
  })

  it('a stored member past the limit is too large, by its output', async () => {
    const reader = await openZip(oneMember('x'.repeat(2000), { method: 0, declared: 10 }))
    expect(await reader.extract((await reader.readMembers())[0]!, 1000)).toEqual({
      ok: false,
      reason: 'too_large',
      produced: 2000,
    })
  })

  it.each([
    ['output past its declared size (under the limit)', { declared: 500 }, /declared size/],
    ['output short of its declared size', { declared: 700 }, /declared size/],
    ['a wrong CRC-32', { crc32: 1 }, /CRC-32/],
    ['a compression method other than stored or deflate', { method: 12 }, /compression method 12/],
    ['traditional encryption', { flags: 1 }, /encrypted/],
    ['corrupt deflate data', { data: new Uint8Array(600).fill(0xff) }, /corrupt/],
  ])('%s is unreadable', async (_, over, message) => {
    const reader = await openZip(oneMember('hello '.repeat(100), over))
    const out = await reader.extract((await reader.readMembers())[0]!, 1_000_000)
    expect(out).toMatchObject({ ok: false, reason: 'unreadable', message: expect.stringMatching(message) })
  })
})

describe('peek', () => {
  it('reads the first bytes of a stored or deflated member', async () => {
    const zip = zipBytes({ 'a.bin': utf8('PK\u0003\u0004 and much more'), 'b.bin': [utf8('GIF89a'), { level: 0 }] })
    const reader = await openZip(zip)
    const [a, b] = await reader.readMembers()
    expect(Array.from((await reader.peek(a!, 4))!)).toEqual([0x50, 0x4b, 3, 4])
    expect(new TextDecoder().decode((await reader.peek(b!, 3))!)).toBe('GIF')
  })

  it.each([
    ['encrypted', { flags: 1 }],
    ['an unknown method', { method: 12 }],
    ['corrupt', { data: new Uint8Array(600).fill(0xff) }],
  ])('is null for a member %s', async (_, over) => {
    const reader = await openZip(oneMember('hello', over))
    expect(await reader.peek((await reader.readMembers())[0]!, 8)).toBeNull()
  })
})

describe('isUnsafeName', () => {
  it.each([
    ['a/b.ebp.md', false],
    ['a\\b.ebp.md', false],
    ['..a/b..', false],
    ['', true],
    ['/etc/x', true],
    ['\\x', true],
    ['C:x', true],
    ['c:/x', true],
    ['../x', true],
    ['a/../../x', true],
    ['a\\..\\x', true],
    ['..', true],
    ['a\u0001b', true],
    ['a\u001fb', true],
  ])('%j: %s', async (name, unsafe) => {
    const zip = zipOf([{ name, method: 0, crc32: 0, declared: 0, data: new Uint8Array(0) }])
    expect(isUnsafeName((await membersOf(zip))[0]!)).toBe(unsafe)
  })
})

describe('isArchiveFault', () => {
  const zlibError = (() => {
    try {
      inflateRawSync(Buffer.alloc(10, 0xff))
    } catch (err) {
      return err
    }
  })()
  it.each([
    ['a plain Error (as yauzl reports)', new Error('invalid local file header signature: 0x0'), true],
    ["zlib's report on bad data", zlibError, true],
    ['a TypeError', new TypeError('x is not a function'), false],
    ['a RangeError', new RangeError('position is negative: -1'), false],
    ['not an Error', 'unexpected EOF', false],
  ])('%s: %s', (_, err, fault) => {
    expect(isArchiveFault(err)).toBe(fault)
  })
})
