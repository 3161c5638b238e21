import { z } from 'zod'
import { decodeContent, fileKey, fileServicesOf, maxReadBytes, readEncoding, throughService } from '../file-ops.js'
import { defineOperation } from '../types.js'

/** Reads a file the run's user may read (GET /api/v1/files/:id's rules), by its id, r2Key or flow key. */
export const fileRead = defineOperation({
  type: 'file_read',
  category: 'files',
  label: 'Read a file',
  description:
    "Reads a file the run's user may read, named by its id, r2Key or flow key (at most 10 MiB); output { id, key, filename, contentType, sizeBytes, encoding, content }, content as text, base64 or parsed JSON.",
  effects: 'reads',
  needs: () => [{ resource: 'system/files', action: 'read' }],
  example: { key: '{{$steps.upload.id}}', encoding: 'json' },
  configSchema: z.strictObject({
    key: fileKey(
      'The file: its id, its r2Key as the File object shows it, or the flow key it was written at (reports/a.csv)',
    ),
    encoding: readEncoding(),
  }),
  async run({ key, encoding }, ctx) {
    const { files } = fileServicesOf(ctx)
    const { file, bytes } = await throughService(() => files.readContent(ctx.principal, key, maxReadBytes))
    const content = decodeContent(bytes, encoding)
    return {
      id: file.id,
      key: file.r2Key,
      filename: file.filename,
      contentType: file.mimeType,
      sizeBytes: file.sizeBytes,
      encoding,
      content,
    }
  },
})
