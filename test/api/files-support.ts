import { createHash, randomBytes } from 'node:crypto'
import { setTimeout as pause } from 'node:timers/promises'
import sharp from 'sharp'
import { expect } from 'vitest'
import { startServer, type Reply, type TestAppOptions, type TestServer } from '../support/harness.js'

/** Shared steps of the files API tests: uploads through every route, and images to upload. */

export const FILES = '/api/v1/files'

export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')

/** A JPEG or PNG of the given size, plain colour with a stripe (so encoders have something to keep). */
export async function image(format: 'jpeg' | 'png', width: number, height: number): Promise<Buffer> {
  const base = sharp({ create: { width, height, channels: 3, background: { r: 40, g: 120, b: 200 } } })
  const stripe = await sharp({
    create: { width: Math.max(1, Math.floor(width / 4)), height, channels: 3, background: { r: 250, g: 200, b: 20 } },
  })
    .png()
    .toBuffer()
  const composed = base.composite([{ input: stripe, left: 0, top: 0 }])
  return format === 'jpeg' ? composed.jpeg({ quality: 90 }).toBuffer() : composed.png().toBuffer()
}

export const someBytes = (size: number): Buffer => randomBytes(size)

export interface UploadOptions {
  filename?: string
  mime?: string
  visibility?: 'public' | 'private'
  collection_name?: string
  /** Stop after the PUT (no confirm). */
  confirm?: boolean
}

/** The token flow: upload-token, PUT the bytes to uploadUrl, confirm-upload. Returns the file id. */
export async function uploadViaToken(
  server: TestServer,
  token: string,
  bytes: Buffer,
  options: UploadOptions = {},
): Promise<string> {
  const mime = options.mime ?? 'application/octet-stream'
  const body: Record<string, unknown> = {
    filename: options.filename ?? 'data.bin',
    mime_type: mime,
    size_bytes: bytes.length,
  }
  if (options.visibility) body.visibility = options.visibility
  if (options.collection_name) body.collection_name = options.collection_name
  const reply = await server.request('POST', `${FILES}/upload-token`, { token, body })
  expect(reply.status, reply.text).toBe(200)
  const put = await fetch(reply.body.uploadUrl, { method: 'PUT', headers: { 'content-type': mime }, body: bytes })
  expect(put.status, await put.text()).toBe(200)
  if (options.confirm !== false) {
    const confirmed = await server.request('POST', `${FILES}/confirm-upload/${reply.body.id}`, { token })
    expect(confirmed.status, confirmed.text).toBe(200)
  }
  return reply.body.id
}

/** A multipart body as a browser's FormData sends it. */
export function form(
  fields: Record<string, string>,
  file?: { filename: string; type: string; bytes: Uint8Array; field?: string },
): FormData {
  const data = new FormData()
  for (const [name, value] of Object.entries(fields)) data.append(name, value)
  if (file) data.append(file.field ?? 'file', new Blob([file.bytes], { type: file.type }), file.filename)
  return data
}

/** POSTs a multipart body (FormData, or raw bytes with a Content-Type of our choosing). */
export async function postForm(
  server: TestServer,
  path: string,
  token: string | undefined,
  body: FormData | { raw: Uint8Array | string; type: string },
): Promise<Reply> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {}
  const init: RequestInit =
    body instanceof FormData
      ? { method: 'POST', headers, body }
      : { method: 'POST', headers: { ...headers, 'content-type': body.type }, body: body.raw }
  const res = await fetch(`${server.url}${path}`, init)
  const text = await res.text()
  let parsed: unknown
  try {
    parsed = text === '' ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: res.status, headers: res.headers, text, body: parsed }
}

/** The proxy upload. */
export async function uploadViaProxy(
  server: TestServer,
  token: string,
  bytes: Uint8Array,
  options: { filename?: string; mime?: string; visibility?: string; collection_name?: string } = {},
): Promise<Reply> {
  const fields: Record<string, string> = {}
  if (options.visibility) fields.visibility = options.visibility
  if (options.collection_name) fields.collection_name = options.collection_name
  return postForm(
    server,
    `${FILES}/upload`,
    token,
    form(fields, { filename: options.filename ?? 'data.bin', type: options.mime ?? 'application/octet-stream', bytes }),
  )
}

/** The bytes behind a download URL (presigned: no credential). */
export async function download(url: string): Promise<{ status: number; bytes: Buffer; type: string | null }> {
  const res = await fetch(url)
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') }
}

/** The bytes a caller gets through download-token (optionally for a size). */
export async function downloadVia(
  server: TestServer,
  token: string,
  id: string,
  size?: string,
): Promise<{ variant: string | null; bytes: Buffer }> {
  const reply = await server.request('GET', `${FILES}/download-token/${id}${size ? `?size=${size}` : ''}`, { token })
  expect(reply.status, reply.text).toBe(200)
  const got = await download(reply.body.downloadUrl)
  expect(got.status).toBe(200)
  return { variant: reply.body.variant, bytes: got.bytes }
}

export async function metadata(server: TestServer, token: string, id: string): Promise<Record<string, any>> {
  const reply = await server.request('GET', `${FILES}/${id}`, { token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

/**
 * Polls a file's metadata until `done` holds (background variants), a short pause between reads; fails
 * after `attempts` reads. The pause only spaces the reads: nothing waits a fixed time for an outcome.
 */
export async function pollFile(
  server: TestServer,
  token: string,
  id: string,
  done: (file: Record<string, any>) => boolean,
  attempts = 400,
): Promise<Record<string, any>> {
  let last: Record<string, any> = {}
  for (let i = 0; i < attempts; i++) {
    last = await metadata(server, token, id)
    if (done(last)) return last
    await pause(25)
  }
  throw new Error(`file ${id} never reached the state waited for; last: ${JSON.stringify(last)}`)
}

export async function patchSettings(server: TestServer, token: string, patch: Record<string, unknown>): Promise<void> {
  const reply = await server.request('PATCH', '/api/v1/settings', { token, body: patch })
  expect(reply.status, reply.text).toBe(200)
}

export async function dimensions(bytes: Buffer): Promise<{ width: number; height: number; format: string }> {
  const meta = await sharp(bytes).metadata()
  return { width: meta.width!, height: meta.height!, format: meta.format! }
}

/** The harness's server, with app options (a storage wrapper that injects faults). */
export function startServerWith(options: TestAppOptions): Promise<TestServer> {
  return startServer({}, options)
}
