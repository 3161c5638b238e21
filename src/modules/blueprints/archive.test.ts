import { describe, expect, it } from 'vitest'
import { crc32, deflateRawSync } from 'node:zlib'
import { zipBase64, zipBomb, zipBytes, zipOf, utf8 } from '../../../test/support/zip.js'
import { archiveRefusals, readArchiveDocument } from './archive.js'

const document = '---\nformat: service-blueprint-v1\n---\n'

async function refusal(archive: string): Promise<{ status: number; error: string; details: Record<string, unknown> }> {
  try {
    await readArchiveDocument(archive)
  } catch (err) {
    const e = err as { status: number; code: string; details: Record<string, unknown> }
    return { status: e.status, error: e.code, details: e.details }
  }
  throw new Error('the archive was accepted')
}

/** One refusal per code of the spec's table (the test below checks none is missing). */
const cases: [string, () => string, Record<string, unknown>?][] = [
  ['archive.invalid_base64', () => 'this is not base64!'],
  ['archive.not_a_zip', () => Buffer.from('just some text, not a zip').toString('base64')],
  [
    'archive.unreadable',
    () => Buffer.from(zipBytes({ 'app.ebp.md': utf8(document) }).subarray(0, 40)).toString('base64'),
  ],
  ['archive.too_large', () => Buffer.alloc(4_000_001).toString('base64'), { limit: 4_000_000 }],
  [
    'archive.too_many_members',
    () => zipBase64(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`f${i}.txt`, utf8('x')]))),
    { limit: 64 },
  ],
  ['archive.unsafe_member_name', () => zipBase64({ '../app.ebp.md': utf8(document) }), { member: '../app.ebp.md' }],
  [
    'archive.nested_archive',
    () => zipBase64({ 'app.ebp.md': utf8(document), 'more/inner.zip': utf8('x') }),
    { member: 'more/inner.zip' },
  ],
  [
    'archive.member_too_large',
    () => zipBase64({ 'app.ebp.md': new Uint8Array(1_000_001).fill(0x20) }),
    { member: 'app.ebp.md', limit: 1_000_000 },
  ],
  ['archive.no_document', () => zipBase64({ 'docs/': new Uint8Array(0) })],
  [
    'archive.multiple_documents',
    () => zipBase64({ 'a.ebp.md': utf8(document), 'deep/b.ebp.md': utf8(document) }),
    { members: ['a.ebp.md', 'deep/b.ebp.md'] },
  ],
  [
    'archive.unexpected_member',
    () => zipBase64({ 'app.ebp.md': utf8(document), 'notes.txt': utf8('hi') }),
    { member: 'notes.txt' },
  ],
  ['archive.empty_document', () => zipBase64({ 'app.ebp.md': utf8(' \n\n') }), { member: 'app.ebp.md' }],
  [
    'archive.not_utf8',
    () => zipBase64({ 'app.ebp.md': new Uint8Array([0x2d, 0x2d, 0x2d, 0xff, 0xfe]) }),
    { member: 'app.ebp.md' },
  ],
]

describe('readArchiveDocument', () => {
  it('reads the one .ebp.md at any depth (folders beside it are fine)', async () => {
    expect(
      await readArchiveDocument(zipBase64({ 'app/': new Uint8Array(0), 'app/v1/desk.ebp.md': utf8(document) })),
    ).toBe(document)
    expect(await readArchiveDocument(zipBase64({ 'DESK.EBP.MD': [utf8(document), { level: 0 }] }))).toBe(document)
  })

  it('accepts base64 wrapped over lines', async () => {
    const wrapped = zipBase64({ 'app.ebp.md': utf8(document) }).replace(/.{76}/g, '$&\n')
    expect(await readArchiveDocument(wrapped)).toBe(document)
  })

  it('the cases below cover every refusal of the spec table', () => {
    expect(cases.map(([code]) => code).sort()).toEqual(Object.keys(archiveRefusals).sort())
  })

  it.each(cases)('%s, with its status and details.code', async (code, make, details = {}) => {
    const status = archiveRefusals[code as keyof typeof archiveRefusals]
    expect(await refusal(make())).toEqual({
      status,
      error: status === 413 ? 'payload_too_large' : 'invalid_request',
      details: { code, ...details },
    })
  })

  it('archive.member_too_large: a bomb declaring 1,000 bytes stops once its output passes 1,000,000', async () => {
    expect(await refusal(zipBomb('app.ebp.md', 5_000_000, 1000))).toMatchObject({
      status: 413,
      details: { code: 'archive.member_too_large' },
    })
  })

  it.each([
    ['an absolute name', '/etc/app.ebp.md'],
    ['a backslash path', '..\\app.ebp.md'],
    ['a drive letter', 'C:/app.ebp.md'],
    ['a .. segment inside', 'a/../../app.ebp.md'],
  ])('archive.unsafe_member_name: %s', async (_, name) => {
    expect((await refusal(zipBase64({ [name]: utf8(document) }))).details).toEqual({
      code: 'archive.unsafe_member_name',
      member: name,
    })
  })

  it.each([
    [
      'a member whose bytes are a zip',
      { 'app.ebp.md': utf8(document), 'data.bin': zipBytes({ 'x.txt': utf8('x') }) },
      'data.bin',
    ],
    ['a gzip member', { 'app.ebp.md': utf8(document), 'data.bin': new Uint8Array([0x1f, 0x8b, 8, 0]) }, 'data.bin'],
    ['a document that is itself a zip', { 'app.ebp.md': zipBytes({ 'x.txt': utf8('x') }) }, 'app.ebp.md'],
    ['a .tar.gz by name', { 'app.ebp.md': utf8(document), 'backup.tar.gz': utf8('x') }, 'backup.tar.gz'],
  ])('archive.nested_archive: %s', async (_, files, member) => {
    expect((await refusal(zipBase64(files))).details).toEqual({ code: 'archive.nested_archive', member })
  })

  it('archive.unreadable: corrupt member data', async () => {
    const zip = zipBytes({ 'app.ebp.md': utf8(`${document}${'prose '.repeat(200)}`) })
    zip.fill(0xff, 60, 90)
    expect((await refusal(Buffer.from(zip).toString('base64'))).details).toEqual({ code: 'archive.unreadable' })
  })

  it('archive.empty_document: a zero-byte document', async () => {
    expect((await refusal(zipBase64({ 'app.ebp.md': new Uint8Array(0) }))).details.code).toBe('archive.empty_document')
  })

  it('archive.unsafe_member_name: a control character in the name', async () => {
    expect((await refusal(zipBase64({ 'app\u0007.ebp.md': utf8(document) }))).details.code).toBe(
      'archive.unsafe_member_name',
    )
  })

  it('a backslash inside a name is a plain character, as before', async () => {
    expect(await readArchiveDocument(zipBase64({ 'app\\desk.ebp.md': utf8(document) }))).toBe(document)
  })

  it('a member inflating past its declared size but under the cap is unreadable (400), not too large', async () => {
    const text = utf8(`${document}${'prose '.repeat(200)}`)
    const zip = zipOf([
      { name: 'app.ebp.md', method: 8, crc32: crc32(text), declared: 100, data: deflateRawSync(text) },
    ])
    expect((await refusal(Buffer.from(zip).toString('base64'))).details).toEqual({ code: 'archive.unreadable' })
  })

  it('a ZIP64 archive (sizes in the extra field) is read', async () => {
    const text = utf8(document)
    const zip = zipOf([
      {
        name: 'app.ebp.md',
        method: 8,
        crc32: crc32(text),
        declared: text.byteLength,
        data: deflateRawSync(text),
        zip64: true,
      },
    ])
    expect(await readArchiveDocument(Buffer.from(zip).toString('base64'))).toBe(document)
  })

  it.each([
    ['encrypted', { flags: 1 }],
    ['in an unknown method', { method: 12 }],
    ['corrupt', {}],
  ])('archive.unexpected_member: a member beside the document that is %s', async (_, over) => {
    const text = utf8(document)
    const zip = zipOf([
      { name: 'app.ebp.md', method: 0, crc32: crc32(text), declared: text.byteLength, data: text },
      { name: 'other.bin', method: 8, crc32: 0, declared: 10, data: new Uint8Array(20).fill(0xff), ...over },
    ])
    expect((await refusal(Buffer.from(zip).toString('base64'))).details).toEqual({
      code: 'archive.unexpected_member',
      member: 'other.bin',
    })
  })
})
