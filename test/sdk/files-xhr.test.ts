import { createHash, randomBytes } from 'node:crypto'
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ForbiddenError, type PlinthClient, type UploadProgress } from '../../packages/client/src/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner } from '../support/identity.js'
import { clientFor } from './realtime-support.js'

// The browser path of an upload with progress: where XMLHttpRequest exists the client PUTs through it and
// reports its upload progress events. No browser runs here, so a minimal XMLHttpRequest over node:http
// stands in for the platform's (the part of the API the client uses), talking to the real server.

/** Sends the body in 64 KiB writes and fires upload.onprogress after each one is flushed, as a browser does. */
class NodeXhr {
  static opened: { method: string; url: string; headers: Record<string, string> }[] = []
  status = 0
  responseText = ''
  upload: { onprogress: ((event: { loaded: number }) => void) | null } = { onprogress: null }
  onload: (() => void) | null = null
  onerror: (() => void) | null = null
  onabort: (() => void) | null = null
  private method = 'GET'
  private url = ''
  private headers: Record<string, string> = {}

  open(method: string, url: string) {
    this.method = method
    this.url = url
  }
  setRequestHeader(name: string, value: string) {
    this.headers[name.toLowerCase()] = value
  }
  abort() {
    this.onabort?.()
  }
  async send(body: Blob | Uint8Array) {
    const bytes = body instanceof Blob ? new Uint8Array(await body.arrayBuffer()) : body
    NodeXhr.opened.push({ method: this.method, url: this.url, headers: { ...this.headers } })
    const req = request(this.url, {
      method: this.method,
      headers: { ...this.headers, 'content-length': String(bytes.byteLength) },
    })
    req.on('error', () => this.onerror?.())
    req.on('response', (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => {
        this.status = res.statusCode ?? 0
        this.responseText = text
        this.onload?.()
      })
    })
    for (let at = 0; at < bytes.byteLength; at += 65_536) {
      const chunk = bytes.subarray(at, at + 65_536)
      await new Promise<void>((resolve) => req.write(chunk, () => resolve()))
      this.upload.onprogress?.({ loaded: at + chunk.byteLength })
    }
    req.end()
  }
}

describe('upload progress through XMLHttpRequest (browsers)', () => {
  let server: TestServer
  let client: PlinthClient
  const global = globalThis as { XMLHttpRequest?: unknown }

  beforeAll(async () => {
    server = await startServer()
    client = clientFor(server.url, (await signUpOwner(server)).token)
    global.XMLHttpRequest = NodeXhr
  })
  afterAll(async () => {
    delete global.XMLHttpRequest // files share their worker's globals
    await server?.stop()
  })

  it('PUTs through XHR with the type, reports its progress up to the total, and the file reads back identical', async () => {
    const bytes = randomBytes(3 * 1024 * 1024)
    const progress: UploadProgress[] = []
    const file = await client.files.upload(new Blob([bytes], { type: 'application/pdf' }), {
      filename: 'x.pdf',
      onProgress: (p) => progress.push(p),
    })
    expect(file).toMatchObject({
      mimeType: 'application/pdf',
      sha256: createHash('sha256').update(bytes).digest('hex'),
    })
    expect(NodeXhr.opened).toEqual([
      {
        method: 'PUT',
        url: expect.stringContaining('/api/v1/storage/object?'),
        headers: { 'content-type': 'application/pdf' },
      },
    ])
    expect(progress.length).toBeGreaterThan(10)
    expect(progress.at(-1)).toEqual({ loaded: bytes.length, total: bytes.length })
    const back = Buffer.from(await (await client.files.download(file.id)).arrayBuffer())
    expect(Buffer.compare(back, bytes)).toBe(0)
  })

  it('a refused PUT is the typed error of its envelope', async () => {
    // The upload URL is single-use on local storage: a second PUT through it is 409. Reach the refusal with
    // a URL whose signature is broken instead: 403 forbidden, as the server's envelope says.
    const token = await client.transport.request<{ uploadUrl: string }>('POST', '/api/v1/files/upload-token', {
      body: { filename: 'y.bin', mime_type: 'application/octet-stream', size_bytes: 4 },
    })
    const { putWithProgress } = await import('../../packages/client/src/files-put.js')
    const broken = token.uploadUrl.replace(/sig=[^&]+/, 'sig=AAAA')
    expect(broken).not.toBe(token.uploadUrl)
    const put = putWithProgress(broken, new Uint8Array(4), {
      contentType: 'application/octet-stream',
      onProgress: () => {},
      fetch,
    })
    await expect(put).rejects.toBeInstanceOf(ForbiddenError)
    await expect(put).rejects.toMatchObject({ status: 403, code: 'forbidden' })
  })
})
