import type { Sharp } from 'sharp'
import { z } from 'zod'
import { safeFilename } from '../../files/index.js'
import { readBmp } from '../bmp.js'
import { containerIdConfig, fileKey, fileServicesOf, throughService, writtenFile } from '../file-ops.js'
import { numeric } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'

/** The largest source read: 25 MiB. */
export const maxSourceBytes = 25 * 1024 * 1024
/** A source decoding to more than 100 megapixels is refused (a decompression bomb), as for variants. */
const maxPixels = 100_000_000
/** The largest side written. */
const maxSide = 8_192

/** What can be written: never avif (spec), and not gif, tiff or bmp, which are read only. */
const writable = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' } as const
type Writable = keyof typeof writable
const extensions: Record<Writable, string> = { png: 'png', jpeg: 'jpg', webp: 'webp' }

const side = (what: string) => numeric(z.number().int().min(1).max(maxSide)).optional().describe(what)

const OperationSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('resize'),
    width: side('Largest width in pixels (1-8192)'),
    height: side('Largest height in pixels (1-8192)'),
    fit: z
      .enum(['contain', 'scale-down', 'cover', 'crop'])
      .default('contain')
      .describe('contain (default) or scale-down; cover and crop are refused'),
  }),
  z.strictObject({
    type: z.literal('format'),
    format: z
      .enum(['png', 'jpeg', 'jpg', 'webp', 'avif', 'gif', 'tiff', 'bmp'])
      .describe('png, jpeg or webp; avif, gif, tiff and bmp are refused'),
  }),
  z.strictObject({
    type: z.literal('quality'),
    quality: numeric(z.number().int().min(1).max(100)).describe('1-100; webp output only'),
  }),
])
type TransformOperation = z.output<typeof OperationSchema>

function refuse(
  code: 'unsupported_transform' | 'unsupported_format' | 'format_required' | 'unreadable_image' | 'transform_failed',
  message: string,
  details: Record<string, unknown> = {},
): StepError {
  return new StepError(code, message, details, 422, false)
}

/** The operations as one plan, every refusal that needs no image raised here (before anything is read). */
function planOf(operations: readonly TransformOperation[]) {
  let resize: Extract<TransformOperation, { type: 'resize' }> | undefined
  let format: Writable | undefined
  let quality: number | undefined
  for (const [index, op] of operations.entries()) {
    const seen = op.type === 'resize' ? resize : op.type === 'format' ? format : quality
    if (seen !== undefined)
      throw refuse('unsupported_transform', `operations[${index}]: ${op.type} may appear once`, { index })
    if (op.type === 'resize') {
      if (op.fit === 'cover' || op.fit === 'crop')
        throw refuse(
          'unsupported_transform',
          `operations[${index}]: fit ${op.fit} is not supported; use contain or scale-down`,
          { index, fit: op.fit },
        )
      if (op.width === undefined && op.height === undefined)
        throw refuse('unsupported_transform', `operations[${index}]: resize needs a width or a height`, { index })
      resize = op
    } else if (op.type === 'format') {
      const name = op.format === 'jpg' ? 'jpeg' : op.format
      if (!(name in writable))
        throw refuse(
          'unsupported_format',
          `operations[${index}]: ${op.format} cannot be written; use png, jpeg or webp`,
          { index, format: op.format },
        )
      format = name as Writable
    } else {
      quality = op.quality
    }
  }
  if (quality !== undefined && format !== undefined && format !== 'webp')
    throw refuse('unsupported_transform', `quality applies to webp output only, and the output is ${format}`, {
      format,
    })
  return { resize, format, quality }
}

/** A decoded source: sharp over the bytes (BMP through readBmp), and its format. Throws unreadable_image. */
async function decode(bytes: Buffer): Promise<{ image: Sharp; format: string; width: number; height: number }> {
  const sharp = (await import('sharp')).default
  const bmp = readBmp(bytes)
  if (bmp) {
    if (bmp.width * bmp.height > maxPixels)
      throw refuse('unreadable_image', `The source is over ${maxPixels / 1_000_000} megapixels`)
    return {
      image: sharp(bmp.pixels, { raw: { width: bmp.width, height: bmp.height, channels: bmp.channels } }),
      format: 'bmp',
      width: bmp.width,
      height: bmp.height,
    }
  }
  const image = sharp(bytes, { limitInputPixels: maxPixels, failOn: 'error' })
  const meta = await image.metadata().catch(() => null)
  if (!meta?.format || !meta.width || !meta.height)
    throw refuse(
      'unreadable_image',
      'The source is not an image that can be read (png, jpeg, webp, gif, tiff, avif, uncompressed bmp)',
    )
  if (meta.width * meta.height > maxPixels)
    throw refuse('unreadable_image', `The source is over ${maxPixels / 1_000_000} megapixels`)
  // heif is how sharp names avif sources.
  // EXIF orientations 5-8 turn the image a quarter: the upright size (what rotate() gives) has its sides swapped.
  const turned = (meta.orientation ?? 1) >= 5
  return {
    image,
    format: meta.format === 'heif' ? 'avif' : meta.format,
    width: turned ? meta.height : meta.width,
    height: turned ? meta.width : meta.height,
  }
}

/** The size a resize fitting inside the box gives (never larger with scale-down), as sharp computes it. */
export function fittedSize(
  width: number,
  height: number,
  box: { width?: number; height?: number; fit: string },
): { width: number; height: number } {
  const scales = [
    box.width === undefined ? Infinity : box.width / width,
    box.height === undefined ? Infinity : box.height / height,
  ]
  let scale = Math.min(...scales)
  if (box.fit === 'scale-down') scale = Math.min(scale, 1)
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) }
}

/** `photo.png` → `photo-transformed.webp` (the source's name, its extension replaced). */
export function derivedName(filename: string, format: Writable): string {
  const slash = filename.lastIndexOf('/')
  const dot = filename.lastIndexOf('.')
  const base = dot > slash + 1 ? filename.slice(0, dot) : filename
  return `${base}-transformed.${extensions[format]}`
}

/**
 * Where a result goes when destKey is empty: the flow key `transformed/<source id>/<name>`, `<name>` the
 * source's name (its safe form, at most 100 characters) with `-transformed.<ext>`. One key per source and
 * format, so running the transform again replaces its own result, and two sources never share one.
 */
export function derivedKey(source: { id: string; filename: string }, format: Writable): string {
  const name = derivedName(safeFilename(source.filename.slice(source.filename.lastIndexOf('/') + 1)), format)
  const base = name.slice(0, name.length - `-transformed.${extensions[format]}`.length).slice(0, 100)
  return `transformed/${source.id}/${base}-transformed.${extensions[format]}`
}

/**
 * Resizes and re-encodes an image file with sharp, as the run's principal: the source read as GET
 * /api/v1/files/:id allows, the result written as file_upload writes. Every refusal and every failure of
 * the transform comes before the write: a transform that cannot be performed writes nothing.
 */
export const fileTransform = defineOperation({
  type: 'file_transform',
  category: 'files',
  label: 'Transform an image',
  description:
    'Resizes (fit contain or scale-down) and re-encodes (png, jpeg, webp; quality for webp) an image file into the file at destKey (a flow key: new or replaced; an id or r2Key: replaced; empty: a key derived from the source); output { id, key, filename, contentType, sizeBytes, width, height, format, sourceId, replaced }.',
  effects: 'writes',
  needs: () => [
    { resource: 'system/files', action: 'read' },
    { resource: 'system/files', action: 'create' },
  ],
  example: {
    sourceKey: '{{$trigger.body.fileId}}',
    operations: [
      { type: 'resize', width: 800, fit: 'scale-down' },
      { type: 'format', format: 'webp' },
      { type: 'quality', quality: 75 },
    ],
  },
  configSchema: z.strictObject({
    sourceKey: fileKey('The source image: its file id, r2Key or flow key'),
    destKey: z
      .string()
      .max(1024)
      .default('')
      .describe(
        'Where the result goes: a flow key (thumbs/a.webp), or the id or r2Key of a file to replace; empty: transformed/<source id>/<name>-transformed.<ext>',
      ),
    operations: z.array(OperationSchema).min(1).max(3).describe('resize, format and quality, each at most once'),
    containerId: containerIdConfig(),
  }),
  async run(config, ctx) {
    const { files } = fileServicesOf(ctx)
    const plan = planOf(config.operations)
    const { file: source, bytes } = await throughService(() =>
      files.readContent(ctx.principal, config.sourceKey, maxSourceBytes),
    )
    const { image, format: sourceFormat, ...size } = await decode(bytes)
    const format = plan.format ?? (sourceFormat in writable ? (sourceFormat as Writable) : undefined)
    if (!format)
      throw refuse(
        'format_required',
        `A ${sourceFormat} source cannot be written as ${sourceFormat}: add a format operation (png, jpeg or webp)`,
        { sourceFormat },
      )
    if (plan.quality !== undefined && format !== 'webp')
      throw refuse('unsupported_transform', `quality applies to webp output only, and the output is ${format}`, {
        format,
      })
    let pipeline = image.rotate()
    if (plan.resize) {
      const { width, height, fit } = plan.resize
      const fitted = fittedSize(size.width, size.height, plan.resize)
      if (fitted.width > maxSide || fitted.height > maxSide || fitted.width * fitted.height > maxPixels) {
        throw refuse(
          'unsupported_transform',
          `The result would be ${fitted.width}×${fitted.height}; at most ${maxSide} pixels a side`,
          fitted,
        )
      }
      // Cloudflare's meanings, which the spec's names are: contain fits inside the box (and may enlarge), scale-down never enlarges.
      pipeline = pipeline.resize({ width, height, fit: 'inside', withoutEnlargement: fit === 'scale-down' })
    }
    pipeline =
      format === 'png'
        ? pipeline.png()
        : format === 'jpeg'
          ? pipeline.jpeg({ quality: 80 })
          : pipeline.webp({ quality: plan.quality ?? 80 })
    let output: { data: Buffer; info: { width: number; height: number } }
    try {
      output = await pipeline.toBuffer({ resolveWithObject: true })
    } catch (err) {
      throw refuse('transform_failed', `The image could not be transformed: ${(err as Error).message.slice(0, 200)}`)
    }
    const destKey = config.destKey.trim() === '' ? derivedKey(source, format) : config.destKey
    // A new file takes the source's visibility and collection; a private source is never written over a
    // public file (writeContent refuses it): a private image never yields a public copy.
    const { file, replaced } = await throughService(() =>
      files.writeContent(ctx.principal, destKey, {
        bytes: output.data,
        mimeType: writable[format],
        visibility: source.visibility,
        collectionName: source.collectionName,
        containerId: config.containerId,
      }),
    )
    return {
      ...writtenFile(file, replaced),
      width: output.info.width,
      height: output.info.height,
      format,
      sourceId: source.id,
    }
  },
})
