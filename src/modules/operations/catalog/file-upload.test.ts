import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { fakeFile, fakeFileServices } from '../file-ops-fake.js'
import { StepError } from '../types.js'
import { fileUpload } from './file-upload.js'

const existing = fakeFile('report.csv', 'text/csv', Buffer.from('a,b'))
const theirs = fakeFile('theirs.csv', 'text/csv', Buffer.from('x'))

const setup = () =>
  fakeFileServices([existing, theirs], {
    [theirs.file.id]: new AppError('forbidden', 'This file is outside the files you may update'),
  })
const run = (rig: ReturnType<typeof setup>, config: Record<string, unknown>) =>
  fileUpload.run(fileUpload.configSchema.parse(config), rig.context()) as Promise<Record<string, unknown>>
const failure = async (rig: ReturnType<typeof setup>, config: Record<string, unknown>): Promise<StepError> => {
  const err = await run(rig, config).then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(StepError)
  return err as StepError
}

describe('file_upload', () => {
  it('key and content are required; contentType defaults to application/octet-stream; metadata holds visibility and collectionName only', () => {
    expect(fileUpload.configSchema.safeParse({ key: 'a.txt' }).success).toBe(false)
    expect(fileUpload.configSchema.safeParse({ content: 'x' }).success).toBe(false)
    expect(fileUpload.configSchema.parse({ key: 'a.txt', content: 'x' })).toEqual({
      key: 'a.txt',
      content: 'x',
      encoding: 'text',
      contentType: 'application/octet-stream',
    })
    expect(
      fileUpload.configSchema.safeParse({
        key: 'a',
        content: 'x',
        metadata: { visibility: 'private', collectionName: 'docs' },
      }).success,
    ).toBe(true)
    expect(
      fileUpload.configSchema.safeParse({ key: 'a', content: 'x', metadata: { visibility: 'secret' } }).success,
    ).toBe(false)
    expect(fileUpload.configSchema.safeParse({ key: 'a', content: 'x', metadata: { author: 'me' } }).success).toBe(
      false,
    )
  })
  it('writes text as UTF-8 under the key, with the type and metadata given', async () => {
    const rig = setup()
    const out = await run(rig, {
      key: 'notes/today.txt',
      content: 'héllo',
      contentType: 'text/plain',
      metadata: { visibility: 'private', collectionName: 'docs' },
    })
    expect(rig.writes).toEqual([
      {
        key: 'notes/today.txt',
        bytes: Buffer.from('héllo'),
        mimeType: 'text/plain',
        visibility: 'private',
        collectionName: 'docs',
      },
    ])
    expect(out).toMatchObject({ filename: 'today.txt', contentType: 'text/plain', sizeBytes: 6, replaced: false })
    expect(Object.keys(out).sort()).toEqual([
      'collectionName',
      'contentType',
      'filename',
      'id',
      'key',
      'replaced',
      'sha256',
      'sizeBytes',
      'visibility',
    ])
  })
  it('encoding base64 writes the decoded bytes (standard or URL-safe alphabet, whitespace ignored)', async () => {
    const rig = setup()
    const bytes = Buffer.from([0xfb, 0xff, 0x00, 0x10])
    await run(rig, { key: 'a.bin', content: bytes.toString('base64'), encoding: 'base64' })
    await run(rig, { key: 'b.bin', content: ` ${bytes.toString('base64url')}\n`, encoding: 'base64' })
    expect(rig.writes.map((w) => w.bytes)).toEqual([bytes, bytes])
  })
  it('content that is not base64 is invalid_content and nothing is written', async () => {
    const rig = setup()
    expect(await failure(rig, { key: 'a.bin', content: 'not base64!', encoding: 'base64' })).toMatchObject({
      code: 'invalid_content',
      retryable: false,
    })
    expect(await failure(rig, { key: 'a.bin', content: 'abcde', encoding: 'base64' })).toMatchObject({
      code: 'invalid_content',
    })
    expect(rig.writes).toEqual([])
  })
  it('a key naming an existing file replaces it (replaced: true)', async () => {
    const rig = setup()
    expect(await run(rig, { key: existing.file.id, content: 'c,d', contentType: 'text/csv' })).toMatchObject({
      id: existing.file.id,
      replaced: true,
    })
  })
  it("a refusal of the files service is the API's typed error", async () => {
    const rig = setup()
    expect(await failure(rig, { key: theirs.file.id, content: 'mine now' })).toMatchObject({
      code: 'forbidden',
      statusCode: 403,
      retryable: false,
    })
  })
})
