import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { guardedLookup, isBlockedAddressError, isBlockedHost, type SocketLookup } from '../../lib/outbound/index.js'

/** Where and as whom a connection reaches its bucket. Holds the plaintext secret: never sent out or logged. */
export interface S3Target {
  provider: 'r2' | 's3' | 'minio'
  endpoint: string
  region: string
  bucketName: string
  accessKeyId: string
  secretKey: string
}

/** Why a test failed, as a stable word a client can branch on. */
export type ProbeFailure =
  | 'blocked_address'
  | 'unreachable'
  | 'timeout'
  | 'tls_error'
  | 'invalid_credentials'
  | 'access_denied'
  | 'bucket_not_found'
  | 'wrong_region'
  | 'unexpected_response'

export type ProbeResult =
  | { success: true; message: string }
  | { success: false; reason: ProbeFailure; message: string; remoteStatus: number | null; remoteCode: string | null }

export type Probe = (target: S3Target) => Promise<ProbeResult>

export interface ProbeOptions {
  /** ALLOW_PRIVATE_NETWORK: when false, loopback, private, link-local and metadata addresses are refused. */
  allowPrivateNetwork: boolean
  /** How long establishing the connection may take. */
  connectTimeoutMs?: number
  /** How long the whole request may take. */
  timeoutMs?: number
}

const messages: Record<ProbeFailure, string> = {
  blocked_address:
    'The endpoint resolves to a private, loopback or link-local address, which this server may not reach (ALLOW_PRIVATE_NETWORK is off)',
  unreachable: 'The endpoint could not be reached (connection refused, reset, or the host name does not resolve)',
  timeout: 'The endpoint did not answer in time',
  tls_error: 'The TLS connection to the endpoint failed (certificate not trusted or not valid for the host)',
  invalid_credentials: 'The store refused the credentials (unknown access key id, or a secret key that does not match)',
  access_denied: 'The credentials are valid but may not list this bucket',
  bucket_not_found: 'The bucket does not exist at this endpoint',
  wrong_region: 'The bucket lives in another region, or the endpoint expects another region',
  unexpected_response: 'The endpoint answered with something other than an S3 response',
}

const credentialCodes = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidToken',
  'ExpiredToken',
  'InvalidClientTokenId',
  'InvalidSecurity',
  'Unauthorized',
])
const accessCodes = new Set(['AccessDenied', 'AllAccessDisabled', 'AccountProblem', 'Forbidden'])
const bucketCodes = new Set(['NoSuchBucket'])
const regionCodes = new Set([
  'PermanentRedirect',
  'AuthorizationHeaderMalformed',
  'IllegalLocationConstraintException',
  'InvalidRegion',
  'Redirect',
])
const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ECONNABORTED',
  'EADDRNOTAVAIL',
])
const timeoutCodes = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'TimeoutError', 'RequestTimeout', 'AbortError'])

/**
 * The connection test: lists at most one key of the bucket (ListObjectsV2, MaxKeys 1) with the AWS SDK,
 * one attempt, short timeouts. Never throws and never returns the SDK's own error text (which may quote
 * signing material): a failure is a reason word, a fixed message, and the store's status and error code.
 */
export function createS3Probe(options: ProbeOptions): Probe {
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000
  const timeoutMs = options.timeoutMs ?? 10_000
  return async (target) => {
    const url = new URL(target.endpoint)
    // A literal address never goes through DNS, so the socket's lookup guard would not see it.
    if (!options.allowPrivateNetwork && isBlockedHost(url.hostname)) return failure('blocked_address')
    const { ListObjectsV2Command } = await import('@aws-sdk/client-s3')
    const { client, close } = await createS3Client(target, {
      lookup: options.allowPrivateNetwork ? undefined : guardedLookup,
      connectTimeoutMs,
      timeoutMs,
    })
    try {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: target.bucketName, MaxKeys: 1 }), {
        abortSignal: AbortSignal.timeout(connectTimeoutMs + timeoutMs),
      })
      // The SDK reads any 200 body as an empty listing; a real one names at least one of these.
      if (
        listed.Name === undefined &&
        listed.MaxKeys === undefined &&
        listed.KeyCount === undefined &&
        listed.IsTruncated === undefined
      ) {
        return failure('unexpected_response', listed.$metadata.httpStatusCode ?? null)
      }
      return { success: true, message: `Listed bucket ${target.bucketName}` }
    } catch (err) {
      return describeFailure(err)
    } finally {
      close()
    }
  }
}

/**
 * An S3 client for one connection, with everything explicit (nothing read from AWS_* variables or ~/.aws),
 * one attempt, and agents whose sockets resolve through `lookup` (lib/outbound's guarded lookup, unless
 * private addresses are allowed); `keepAlive` and a few `maxAttempts` for a client that is kept (files on a
 * connection: a kept-alive socket the store has just closed fails once, and is retried). The AWS SDK is
 * loaded on first use (~10 MB resident). `close` ends it.
 */
export async function createS3Client(
  target: S3Target,
  options: {
    lookup: SocketLookup | undefined
    connectTimeoutMs: number
    timeoutMs: number
    keepAlive?: boolean
    maxAttempts?: number
  },
) {
  const url = new URL(target.endpoint)
  const agentOptions = { keepAlive: options.keepAlive ?? false, ...(options.lookup ? { lookup: options.lookup } : {}) }
  const httpAgent = new HttpAgent(agentOptions)
  const httpsAgent = new HttpsAgent(agentOptions)
  const { S3Client } = await import('@aws-sdk/client-s3')
  const client = new S3Client({
    endpoint: target.endpoint,
    region: signingRegion(target),
    forcePathStyle: !url.hostname.endsWith('.amazonaws.com'),
    credentials: { accessKeyId: target.accessKeyId, secretAccessKey: target.secretKey },
    maxAttempts: options.maxAttempts ?? 1,
    retryMode: 'standard',
    defaultsMode: 'standard',
    followRegionRedirects: false,
    useFipsEndpoint: false,
    useDualstackEndpoint: false,
    useArnRegion: false,
    disableS3ExpressSessionAuth: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      httpAgent,
      httpsAgent,
      connectionTimeout: options.connectTimeoutMs,
      requestTimeout: options.timeoutMs,
      throwOnRequestTimeout: true,
    },
  })
  return {
    client,
    close() {
      client.destroy()
      httpAgent.destroy()
      httpsAgent.destroy()
    },
  }
}

/**
 * The region the request is signed for. `auto` is R2's own region name; other stores get `us-east-1`,
 * the region S3 and MinIO take when none is configured.
 */
function signingRegion(target: S3Target): string {
  if (target.region !== 'auto') return target.region
  return target.provider === 'r2' ? 'auto' : 'us-east-1'
}

function failure(
  reason: ProbeFailure,
  remoteStatus: number | null = null,
  remoteCode: string | null = null,
): ProbeResult {
  return { success: false, reason, message: messages[reason], remoteStatus, remoteCode }
}

/** Maps whatever the SDK or the socket threw onto a reason; only vetted fields leave. */
export function describeFailure(err: unknown): ProbeResult {
  const e = (typeof err === 'object' && err !== null ? err : {}) as {
    name?: unknown
    code?: unknown
    $metadata?: { httpStatusCode?: unknown }
    cause?: unknown
  }
  if (isBlockedAddressError(err)) return failure('blocked_address')
  const status = typeof e.$metadata?.httpStatusCode === 'number' ? e.$metadata.httpStatusCode : null
  const name = typeof e.name === 'string' ? e.name : ''
  const code =
    typeof e.code === 'string'
      ? e.code
      : typeof (e.cause as { code?: unknown } | undefined)?.code === 'string'
        ? (e.cause as { code: string }).code
        : ''
  // The store's error code is echoed only when it looks like one (it comes from a remote server).
  const remoteCode = status !== null && /^[A-Za-z][A-Za-z0-9.]{0,63}$/.test(name) && name !== 'Error' ? name : null
  if (status === null) {
    if (timeoutCodes.has(name) || timeoutCodes.has(code)) return failure('timeout')
    if (networkCodes.has(code)) return failure('unreachable')
    if (
      /^(CERT_|ERR_TLS_|ERR_SSL_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/.test(code) ||
      code === 'ERR_TLS_CERT_ALTNAME_INVALID'
    )
      return failure('tls_error')
    return failure('unreachable')
  }
  if (credentialCodes.has(name)) return failure('invalid_credentials', status, remoteCode)
  if (regionCodes.has(name) || status === 301 || status === 307) return failure('wrong_region', status, remoteCode)
  if (bucketCodes.has(name)) return failure('bucket_not_found', status, remoteCode)
  if (accessCodes.has(name) || status === 403) return failure('access_denied', status, remoteCode)
  if (status === 401) return failure('invalid_credentials', status, remoteCode)
  if (status === 408 || status === 504) return failure('timeout', status, remoteCode)
  return failure('unexpected_response', status, remoteCode)
}
