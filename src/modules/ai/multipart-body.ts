import { randomBytes } from 'node:crypto'
import type { FilesService } from '../files/index.js'

type UploadBody = Parameters<FilesService['upload']>[1]

/** One file as a multipart/form-data body, the shape the files API's proxy upload reads. */
export function multipartBody(field: string, filename: string, contentType: string, bytes: Uint8Array): UploadBody {
  const boundary = `plinth-ai-${randomBytes(12).toString('hex')}`
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: ${contentType}\r\n\r\n`,
    'utf8',
  )
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8')
  const whole = Buffer.concat([head, bytes, tail])
  return {
    source: (async function* () {
      yield whole
    })(),
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength: whole.length,
  }
}
