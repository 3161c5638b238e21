import { z } from 'zod'
import {
  containerIdConfig,
  encodeContent,
  fileKey,
  fileServicesOf,
  maxWriteBytes,
  throughService,
  writtenFile,
} from '../file-ops.js'
import { text } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'

/**
 * Stores content as a file through the files service as the run's principal, R2-like: a key naming a file
 * (its id, its r2Key, or a flow key it holds) replaces that file (as POST /api/v1/files/:id/replace: update
 * within the grant's item_filter); a free flow key makes a new file holding it (as the proxy upload:
 * create, quota, uploadedBy the run's user). Decision 040.
 */
export const fileUpload = defineOperation({
  type: 'file_upload',
  category: 'files',
  label: 'Upload a file',
  description:
    'Stores text or base64 content (at most 10 MiB) at key: a flow key (reports/a.csv) makes a new file or replaces the one already there, an id or r2Key replaces that file; output { id, key, filename, contentType, sizeBytes, sha256, visibility, collectionName, replaced }.',
  effects: 'writes',
  // Replacing a file at a key that exists needs update instead; a new file (the usual case) needs create.
  needs: () => [{ resource: 'system/files', action: 'create' }],
  example: {
    key: 'reports/{{$trigger.body.day}}.json',
    content: '{{$steps.report.result}}',
    contentType: 'application/json',
    metadata: { visibility: 'private' },
  },
  configSchema: z.strictObject({
    key: fileKey(
      'A flow key (reports/a.csv: a new file, or the file already there), or the id or r2Key of a file to replace',
    ),
    content: text(Math.ceil((maxWriteBytes * 4) / 3) + 4, 1).describe(
      'The content: text, or base64 with encoding base64',
    ),
    encoding: z
      .enum(['text', 'base64'])
      .default('text')
      .describe('How content is written: text (stored as UTF-8) or base64'),
    contentType: text(255, 1).default('application/octet-stream').describe('The media type stored with the file'),
    metadata: z
      .strictObject({
        visibility: z.enum(['public', 'private']).optional().describe("A new file's visibility (public by default)"),
        collectionName: text(100, 1)
          .optional()
          .describe('The collection a new file is attached to (__system by default)'),
      })
      .optional()
      .describe("The new file's visibility and collection (a replaced file keeps its own)"),
    containerId: containerIdConfig(),
  }),
  async run(config, ctx) {
    const { files } = fileServicesOf(ctx)
    const bytes = encodeContent(config.content, config.encoding)
    if (bytes.length > maxWriteBytes)
      throw new StepError(
        'limit_exceeded',
        `A flow writes at most ${maxWriteBytes} bytes in one step`,
        { limit: maxWriteBytes },
        400,
        false,
      )
    const { file, replaced } = await throughService(() =>
      files.writeContent(ctx.principal, config.key, {
        bytes,
        mimeType: config.contentType,
        visibility: config.metadata?.visibility,
        collectionName: config.metadata?.collectionName,
        containerId: config.containerId,
      }),
    )
    return writtenFile(file, replaced)
  },
})
