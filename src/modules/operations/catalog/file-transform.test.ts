import { randomBytes } from 'node:crypto'
import sharp from 'sharp'
import { beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { writeBmp } from '../bmp.js'
import { fakeFile, fakeFileServices, type FakeFile } from '../file-ops-fake.js'
import { StepError } from '../types.js'
import { derivedKey, derivedName, fileTransform, fittedSize } from './file-transform.js'

const image = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 40 } } })

let png: FakeFile
let jpeg: FakeFile
let gif: FakeFile
let tiff: FakeFile
let avif: FakeFile
let bmp: FakeFile
let privatePng: FakeFile
let noisy: FakeFile
let tall: FakeFile
const junk = fakeFile('junk.png', 'image/png', Buffer.from('not an image at all'))
const theirs = fakeFile('theirs.png', 'image/png', Buffer.alloc(0))

beforeAll(async () => {
  png = fakeFile('photo.png', 'image/png', await image(400, 200).png().toBuffer())
  jpeg = fakeFile('photo.jpg', 'image/jpeg', await image(40, 20).jpeg().toBuffer())
  gif = fakeFile('anim.gif', 'image/gif', await image(40, 20).gif().toBuffer())
  tiff = fakeFile('scan.tiff', 'image/tiff', await image(40, 20).tiff().toBuffer())
  avif = fakeFile('pic.avif', 'image/avif', await image(40, 20).avif().toBuffer())
  bmp = fakeFile('old.bmp', 'image/bmp', writeBmp(await image(30, 10).raw().toBuffer(), 30, 10))
  noisy = fakeFile(
    'noise.png',
    'image/png',
    await sharp(randomBytes(64 * 64 * 3), { raw: { width: 64, height: 64, channels: 3 } })
      .png()
      .toBuffer(),
  )
  tall = fakeFile('tall.png', 'image/png', await image(10, 200).png().toBuffer())
  privatePng = fakeFile('mine.png', 'image/png', await image(10, 10).png().toBuffer(), {
    visibility: 'private',
    collectionName: 'photos',
  })
})

const setup = () =>
  fakeFileServices([noisy, tall, png, jpeg, gif, tiff, avif, bmp, privatePng, junk], {
    [theirs.file.id]: new AppError('forbidden', 'This file is outside the files you may update'),
  })
const run = (rig: ReturnType<typeof setup>, config: Record<string, unknown>) =>
  fileTransform.run(fileTransform.configSchema.parse(config), rig.context()) as Promise<Record<string, any>>
/** A refusal: a typed StepError, and nothing written. */
const refused = async (config: Record<string, unknown>): Promise<StepError> => {
  const rig = setup()
  const err = await run(rig, config).then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(StepError)
  expect(rig.writes).toEqual([])
  return err as StepError
}
const written = async (rig: ReturnType<typeof setup>) => sharp(rig.writes[rig.writes.length - 1]!.bytes).metadata()

describe('file_transform config', () => {
  it('sourceKey and operations are required; operations are resize, format and quality with their bounds', () => {
    const ok = (config: Record<string, unknown>) =>
      fileTransform.configSchema.safeParse({ sourceKey: 'x', ...config }).success
    expect(fileTransform.configSchema.safeParse({ operations: [{ type: 'format', format: 'png' }] }).success).toBe(
      false,
    )
    expect(ok({})).toBe(false)
    expect(ok({ operations: [] })).toBe(false)
    expect(ok({ operations: [{ type: 'rotate', angle: 90 }] })).toBe(false)
    expect(ok({ operations: [{ type: 'resize', width: 0 }] })).toBe(false)
    expect(ok({ operations: [{ type: 'resize', width: 8193 }] })).toBe(false)
    expect(ok({ operations: [{ type: 'resize', width: 100, fit: 'fill' }] })).toBe(false)
    expect(ok({ operations: [{ type: 'quality', quality: 101 }] })).toBe(false)
    expect(fileTransform.configSchema.parse({ sourceKey: 'x', operations: [{ type: 'resize', width: '64' }] })).toEqual(
      {
        sourceKey: 'x',
        destKey: '',
        operations: [{ type: 'resize', width: 64, fit: 'contain' }],
      },
    )
  })
  it('derives a name from the source and sizes as sharp fits inside', () => {
    expect(derivedName('photo.png', 'webp')).toBe('photo-transformed.webp')
    expect(derivedName('a/b.c/noext', 'jpeg')).toBe('a/b.c/noext-transformed.jpg')
    expect(derivedName('.hidden', 'png')).toBe('.hidden-transformed.png')
    // An empty destKey: a flow key of the source's own, whatever its name (the key rule holds).
    expect(derivedKey({ id: 'f1', filename: 'My photo (1).PNG' }, 'webp')).toBe(
      'transformed/f1/My_photo_1_-transformed.webp',
    )
    expect(derivedKey({ id: 'f1', filename: 'reports/.hidden' }, 'png')).toBe('transformed/f1/_hidden-transformed.png')
    expect(derivedKey({ id: 'f1', filename: `${'x'.repeat(200)}.png` }, 'jpeg')).toBe(
      `transformed/f1/${'x'.repeat(100)}-transformed.jpg`,
    )
    expect(fittedSize(400, 200, { width: 100, fit: 'contain' })).toEqual({ width: 100, height: 50 })
    expect(fittedSize(400, 200, { width: 800, height: 100, fit: 'contain' })).toEqual({ width: 200, height: 100 })
    expect(fittedSize(40, 20, { width: 800, fit: 'contain' })).toEqual({ width: 800, height: 400 })
    expect(fittedSize(40, 20, { width: 800, fit: 'scale-down' })).toEqual({ width: 40, height: 20 })
  })
})

describe('file_transform runs', () => {
  it('resize contain fits inside the box (and enlarges); the result is a new file named after the source, with its visibility and collection', async () => {
    const rig = setup()
    const out = await run(rig, { sourceKey: png.file.id, operations: [{ type: 'resize', width: 100, height: 100 }] })
    expect(out).toMatchObject({
      width: 100,
      height: 50,
      format: 'png',
      sourceId: png.file.id,
      replaced: false,
      filename: 'photo-transformed.png',
      contentType: 'image/png',
    })
    expect(rig.writes[0]).toMatchObject({
      key: `transformed/${png.file.id}/photo-transformed.png`,
      mimeType: 'image/png',
      visibility: 'public',
      collectionName: '__system',
    })
    expect(await written(rig)).toMatchObject({ format: 'png', width: 100, height: 50 })
    await run(rig, { sourceKey: jpeg.file.id, operations: [{ type: 'resize', width: 80 }] })
    expect(await written(rig)).toMatchObject({ format: 'jpeg', width: 80, height: 40 })
  })
  it('an EXIF-rotated source is turned upright before it is fitted', async () => {
    const turned = fakeFile(
      'turned.jpg',
      'image/jpeg',
      await image(40, 20).jpeg().withMetadata({ orientation: 6 }).toBuffer(),
    )
    const rig = fakeFileServices([turned])
    const out = (await fileTransform.run(
      fileTransform.configSchema.parse({ sourceKey: turned.file.id, operations: [{ type: 'resize', width: 10 }] }),
      rig.context(),
    )) as Record<string, unknown>
    expect(out).toMatchObject({ width: 10, height: 20 })
  })
  it('scale-down never enlarges', async () => {
    const rig = setup()
    expect(
      await run(rig, { sourceKey: jpeg.file.id, operations: [{ type: 'resize', width: 80, fit: 'scale-down' }] }),
    ).toMatchObject({ width: 40, height: 20 })
    expect(
      await run(rig, { sourceKey: png.file.id, operations: [{ type: 'resize', width: 80, fit: 'scale-down' }] }),
    ).toMatchObject({ width: 80, height: 40 })
  })
  it('format converts; quality applies to webp; destKey names the new file', async () => {
    const rig = setup()
    const out = await run(rig, {
      sourceKey: png.file.id,
      destKey: 'thumbs/small.webp',
      operations: [
        { type: 'format', format: 'webp' },
        { type: 'quality', quality: 30 },
      ],
    })
    expect(out).toMatchObject({ format: 'webp', contentType: 'image/webp', filename: 'small.webp' })
    expect(await written(rig)).toMatchObject({ format: 'webp', width: 400, height: 200 })
    await run(rig, {
      sourceKey: noisy.file.id,
      operations: [
        { type: 'format', format: 'webp' },
        { type: 'quality', quality: 10 },
      ],
    })
    await run(rig, {
      sourceKey: noisy.file.id,
      operations: [
        { type: 'format', format: 'webp' },
        { type: 'quality', quality: 100 },
      ],
    })
    expect(rig.writes[2]!.bytes.length).toBeGreaterThan(rig.writes[1]!.bytes.length)
    await run(rig, { sourceKey: png.file.id, operations: [{ type: 'format', format: 'jpg' }] })
    expect(await written(rig)).toMatchObject({ format: 'jpeg' })
  })
  it('gif, tiff, avif and bmp sources are read when they name a format', async () => {
    const rig = setup()
    for (const source of [gif, tiff, avif, bmp]) {
      await run(rig, { sourceKey: source.file.id, operations: [{ type: 'format', format: 'png' }] })
      expect(await written(rig)).toMatchObject({ format: 'png', width: source === bmp ? 30 : 40 })
    }
  })
  it('a private source gives a private result in its collection', async () => {
    const rig = setup()
    await run(rig, { sourceKey: privatePng.file.id, operations: [{ type: 'format', format: 'webp' }] })
    expect(rig.writes[0]).toMatchObject({ visibility: 'private', collectionName: 'photos' })
  })
  it("a destKey naming an existing file replaces it; the source's visibility and collection go along (the service keeps the file's own, refusing private over public)", async () => {
    const rig = setup()
    expect(
      await run(rig, {
        sourceKey: png.file.id,
        destKey: jpeg.file.id,
        operations: [{ type: 'format', format: 'jpeg' }],
      }),
    ).toMatchObject({ replaced: true, id: jpeg.file.id })
    expect(rig.writes[0]).toEqual({
      key: jpeg.file.id,
      bytes: expect.any(Buffer),
      mimeType: 'image/jpeg',
      visibility: 'public',
      collectionName: '__system',
    })
  })
})

describe('file_transform refusals write nothing', () => {
  it.each([
    ['fit cover', [{ type: 'resize', width: 10, fit: 'cover' }], 'unsupported_transform'],
    ['fit crop', [{ type: 'resize', width: 10, height: 10, fit: 'crop' }], 'unsupported_transform'],
    ['avif output', [{ type: 'format', format: 'avif' }], 'unsupported_format'],
    ['gif output', [{ type: 'format', format: 'gif' }], 'unsupported_format'],
    ['tiff output', [{ type: 'format', format: 'tiff' }], 'unsupported_format'],
    ['bmp output', [{ type: 'format', format: 'bmp' }], 'unsupported_format'],
    [
      'quality for png output',
      [
        { type: 'format', format: 'png' },
        { type: 'quality', quality: 50 },
      ],
      'unsupported_transform',
    ],
    [
      'quality for jpeg output',
      [
        { type: 'quality', quality: 50 },
        { type: 'format', format: 'jpeg' },
      ],
      'unsupported_transform',
    ],
    ['quality for a png source kept as png', [{ type: 'quality', quality: 50 }], 'unsupported_transform'],
    ['a resize without width or height', [{ type: 'resize' }], 'unsupported_transform'],
    [
      'two resizes',
      [
        { type: 'resize', width: 10 },
        { type: 'resize', width: 20 },
      ],
      'unsupported_transform',
    ],
  ])('%s', async (_name, operations, code) => {
    expect(await refused({ sourceKey: png.file.id, operations })).toMatchObject({
      code,
      statusCode: 422,
      retryable: false,
    })
  })
  it('a result over 8192 pixels a side (a tall image fitted to a wide box)', async () => {
    expect(await refused({ sourceKey: tall.file.id, operations: [{ type: 'resize', width: 8192 }] })).toMatchObject({
      code: 'unsupported_transform',
      details: { width: 8192, height: 163_840 },
    })
  })
  it.each([
    ['gif', () => gif],
    ['tiff', () => tiff],
    ['avif', () => avif],
    ['bmp', () => bmp],
  ])('a %s source without a format is format_required', async (_name, source) => {
    expect(await refused({ sourceKey: source().file.id, operations: [{ type: 'resize', width: 10 }] })).toMatchObject({
      code: 'format_required',
      statusCode: 422,
    })
  })
  it('a source that is no image is unreadable_image', async () => {
    expect(await refused({ sourceKey: junk.file.id, operations: [{ type: 'format', format: 'png' }] })).toMatchObject({
      code: 'unreadable_image',
    })
  })
  it("a source the user may not read is not_found; a destination it may not write is the service's refusal", async () => {
    expect(await refused({ sourceKey: 'f'.repeat(32), operations: [{ type: 'format', format: 'png' }] })).toMatchObject(
      { code: 'not_found', statusCode: 404 },
    )
    const rig = setup()
    const err = await run(rig, {
      sourceKey: png.file.id,
      destKey: theirs.file.id,
      operations: [{ type: 'format', format: 'png' }],
    }).then(
      () => null,
      (e: unknown) => e,
    )
    expect(err).toMatchObject({ code: 'forbidden', statusCode: 403 })
    expect(rig.writes).toEqual([])
  })
})
