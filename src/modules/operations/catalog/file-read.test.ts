import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { fakeFile, fakeFileServices } from '../file-ops-fake.js'
import { StepError } from '../types.js'
import { fileRead } from './file-read.js'

const text = fakeFile('notes.txt', 'text/plain', Buffer.from('héllo'))
const json = fakeFile('data.json', 'application/json', Buffer.from('{"n":[1,2]}'))
const broken = fakeFile('broken.json', 'application/json', Buffer.from('{"n":'))
const binary = fakeFile('bytes.bin', 'application/octet-stream', Buffer.from([0xff, 0xfe, 0x00, 0x01]))
const hidden = fakeFile('theirs.txt', 'text/plain', Buffer.from('secret'))
const rig = fakeFileServices([text, json, broken, binary], {
  [hidden.file.id]: new AppError('not_found', 'File not found'),
})

const run = (config: Record<string, unknown>) =>
  fileRead.run(fileRead.configSchema.parse(config), rig.context()) as Promise<Record<string, unknown>>
const failure = async (config: Record<string, unknown>): Promise<StepError> => {
  const err = await run(config).then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(StepError)
  return err as StepError
}

describe('file_read', () => {
  it('key is required; encoding is text (default), base64 or json', () => {
    expect(fileRead.configSchema.safeParse({}).success).toBe(false)
    expect(fileRead.configSchema.safeParse({ key: '' }).success).toBe(false)
    expect(fileRead.configSchema.parse({ key: 'x' })).toEqual({ key: 'x', encoding: 'text' })
    expect(fileRead.configSchema.safeParse({ key: 'x', encoding: 'hex' }).success).toBe(false)
    expect(fileRead.configSchema.safeParse({ key: 'x', bucket: 'y' }).success).toBe(false)
  })
  it('answers the file as UTF-8 text by default, with its id, key, name, type and size', async () => {
    expect(await run({ key: text.file.id })).toEqual({
      id: text.file.id,
      key: text.file.r2Key,
      filename: 'notes.txt',
      contentType: 'text/plain',
      sizeBytes: 6,
      encoding: 'text',
      content: 'héllo',
    })
  })
  it('reads by r2Key too', async () => {
    expect(await run({ key: text.file.r2Key })).toMatchObject({ id: text.file.id, content: 'héllo' })
  })
  it('base64 answers the bytes as they are', async () => {
    expect(await run({ key: binary.file.id, encoding: 'base64' })).toMatchObject({
      content: Buffer.from([0xff, 0xfe, 0x00, 0x01]).toString('base64'),
      encoding: 'base64',
    })
  })
  it('json answers the parsed value', async () => {
    expect(await run({ key: json.file.id, encoding: 'json' })).toMatchObject({ content: { n: [1, 2] } })
  })
  it('json that does not parse is invalid_json (422, not retried)', async () => {
    const err = await failure({ key: broken.file.id, encoding: 'json' })
    expect(err).toMatchObject({ code: 'invalid_json', statusCode: 422, retryable: false })
  })
  it('bytes that are not UTF-8 read as text are invalid_text, pointing at base64', async () => {
    const err = await failure({ key: binary.file.id })
    expect(err).toMatchObject({ code: 'invalid_text', statusCode: 422, retryable: false })
    expect(err.message).toContain('base64')
  })
  it("a file the service will not show is the API's not_found (404), not retried", async () => {
    expect(await failure({ key: hidden.file.id })).toMatchObject({
      code: 'not_found',
      statusCode: 404,
      retryable: false,
    })
    expect(await failure({ key: 'no-such-file' })).toMatchObject({ code: 'not_found', statusCode: 404 })
  })
})
