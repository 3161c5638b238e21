import { createHash, createHmac, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
// @ts-expect-error s3rver ships no type declarations
import S3rver from 's3rver'

// s3rver's built-in account id; it never checks the secret of a SigV4 request, so each store makes one up
// and its proxy checks presigned URLs against that.
const accessKeyId = 'S3RVER'

export interface TestS3Store {
  /** The endpoint to give the S3 driver: a proxy that checks presigned signatures, in front of s3rver. */
  readonly endpoint: string
  readonly bucket: string
  /** The credentials presigned URLs must be signed with (a random secret per store). */
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string }
  /** Requests the proxy refused for a bad signature. */
  readonly refused: number
  stop(): Promise<void>
}

/**
 * An S3-compatible store for tests: s3rver on a free port over a temp directory, with `bucket` created at
 * start. s3rver checks a presigned URL's expiry but not its SigV4 signature, so a small proxy in front of it
 * verifies every presigned (query-signed) request the way S3, R2 and MinIO do, signed headers included:
 * a body of another length or Content-Type than the URL was signed for is refused with 403
 * SignatureDoesNotMatch, as a real store refuses it.
 */
/** The S3_* settings that point a Plinth server at this store. */
export function s3Settings(store: TestS3Store): Record<string, string> {
  return {
    S3_ENDPOINT: store.endpoint,
    S3_BUCKET: store.bucket,
    S3_ACCESS_KEY_ID: store.credentials.accessKeyId,
    S3_SECRET_ACCESS_KEY: store.credentials.secretAccessKey,
    S3_REGION: 'auto',
  }
}

export async function startS3Store(bucket = 'plinth-test'): Promise<TestS3Store> {
  const credentials = { accessKeyId, secretAccessKey: randomBytes(20).toString('base64url') }
  const directory = mkdtempSync(join(tmpdir(), 'plinth-s3rver-'))
  const s3rver = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  })
  const { port: upstreamPort } = (await s3rver.run()) as AddressInfo
  let refused = 0
  const proxy: Server = createServer((req, res) => {
    if (!presignedSignatureMatches(req, credentials.secretAccessKey)) {
      refused++
      res.writeHead(403, { 'Content-Type': 'application/xml', Connection: 'close' })
      res.end(
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided.</Message></Error>',
      )
      return
    }
    forward(req, res, upstreamPort)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  const { port } = proxy.address() as AddressInfo
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    credentials,
    get refused() {
      return refused
    },
    async stop() {
      proxy.closeAllConnections()
      await new Promise<void>((resolve) => proxy.close(() => resolve()))
      await s3rver.close()
      rmSync(directory, { recursive: true, force: true })
    },
  }
}

function forward(req: IncomingMessage, res: ServerResponse, port: number): void {
  const upstream = httpRequest(
    { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    },
  )
  upstream.on('error', () => res.destroy())
  req.pipe(upstream)
}

/** SigV4 query-string verification (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html). */
function presignedSignatureMatches(req: IncomingMessage, secretAccessKey: string): boolean {
  const [rawPath = '/', rawQuery = ''] = (req.url ?? '/').split('?', 2)
  const pairs = rawQuery
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf('=')
      const name = decodeURIComponent(at === -1 ? pair : pair.slice(0, at))
      const value = at === -1 ? '' : decodeURIComponent(pair.slice(at + 1))
      return [name, value] as const
    })
  const query = new Map(pairs)
  const provided = query.get('X-Amz-Signature')
  if (provided === undefined) return true // header-signed SDK calls: s3rver's own checks apply
  const credential = query.get('X-Amz-Credential') ?? ''
  const [keyId, date, region, service] = credential.split('/')
  if (keyId !== accessKeyId || !date || !region || !service) return false
  const signedHeaders = (query.get('X-Amz-SignedHeaders') ?? '').split(';')
  const canonicalQuery = pairs
    .filter(([name]) => name !== 'X-Amz-Signature')
    .map(([name, value]) => [rfc3986(name), rfc3986(value)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&')
  const canonicalHeaders = signedHeaders.map((name) => `${name}:${headerValue(req, name)}\n`).join('')
  const canonicalRequest = [
    req.method,
    rawPath,
    canonicalQuery,
    canonicalHeaders,
    signedHeaders.join(';'),
    query.get('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD',
  ].join('\n')
  const scope = `${date}/${region}/${service}/aws4_request`
  const stringToSign = ['AWS4-HMAC-SHA256', query.get('X-Amz-Date') ?? '', scope, sha256(canonicalRequest)].join('\n')
  let key = hmac(`AWS4${secretAccessKey}`, date)
  for (const part of [region, service, 'aws4_request']) key = hmac(key, part)
  return createHmac('sha256', key).update(stringToSign).digest('hex') === provided
}

function headerValue(req: IncomingMessage, name: string): string {
  const value = req.headers[name]
  return (Array.isArray(value) ? value.join(',') : (value ?? '')).trim().replace(/\s+/g, ' ')
}

function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex')
}

function hmac(key: string | Buffer, value: string): Buffer {
  return createHmac('sha256', key).update(value).digest()
}
