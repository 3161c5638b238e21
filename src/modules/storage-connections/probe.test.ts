import { describe, expect, it } from 'vitest'
import { createS3Probe, describeFailure, type S3Target } from './probe.js'

const target = (endpoint: string): S3Target => ({
  provider: 's3',
  endpoint,
  region: 'auto',
  bucketName: 'bucket',
  accessKeyId: 'AKID',
  secretKey: 'the-secret',
})
const s3Error = (
  name: string,
  status: number,
  message = 'The request signature we calculated… StringToSign: AWS4-HMAC-SHA256 the-secret',
) => Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } })
const socketError = (code: string) => Object.assign(new Error(`connect ${code} 10.0.0.1:443`), { code })

describe('describeFailure', () => {
  const rows: {
    name: string
    err: unknown
    reason: string
    remoteStatus?: number | null
    remoteCode?: string | null
  }[] = [
    {
      name: 'SignatureDoesNotMatch',
      err: s3Error('SignatureDoesNotMatch', 403),
      reason: 'invalid_credentials',
      remoteStatus: 403,
      remoteCode: 'SignatureDoesNotMatch',
    },
    {
      name: 'InvalidAccessKeyId',
      err: s3Error('InvalidAccessKeyId', 403),
      reason: 'invalid_credentials',
      remoteCode: 'InvalidAccessKeyId',
    },
    { name: 'AccessDenied', err: s3Error('AccessDenied', 403), reason: 'access_denied', remoteCode: 'AccessDenied' },
    { name: 'a bare 403', err: s3Error('Unknown', 403), reason: 'access_denied' },
    { name: 'NoSuchBucket', err: s3Error('NoSuchBucket', 404), reason: 'bucket_not_found', remoteCode: 'NoSuchBucket' },
    {
      name: 'a 404 that is not an S3 error',
      err: s3Error('NotFound', 404),
      reason: 'unexpected_response',
      remoteStatus: 404,
    },
    { name: 'PermanentRedirect', err: s3Error('PermanentRedirect', 301), reason: 'wrong_region' },
    {
      name: 'AuthorizationHeaderMalformed (region)',
      err: s3Error('AuthorizationHeaderMalformed', 400),
      reason: 'wrong_region',
    },
    {
      name: 'a 500',
      err: s3Error('InternalError', 500),
      reason: 'unexpected_response',
      remoteStatus: 500,
      remoteCode: 'InternalError',
    },
    {
      name: 'a remote code that is not a code is not echoed',
      err: s3Error('<script>alert(1)</script>', 500),
      reason: 'unexpected_response',
      remoteCode: null,
    },
    {
      name: 'connection refused',
      err: socketError('ECONNREFUSED'),
      reason: 'unreachable',
      remoteStatus: null,
      remoteCode: null,
    },
    { name: 'unknown host', err: socketError('ENOTFOUND'), reason: 'unreachable' },
    { name: 'socket timeout', err: socketError('ETIMEDOUT'), reason: 'timeout' },
    { name: 'SDK timeout', err: Object.assign(new Error('timed out'), { name: 'TimeoutError' }), reason: 'timeout' },
    {
      name: 'aborted by the overall deadline',
      err: Object.assign(new Error('aborted'), { name: 'AbortError' }),
      reason: 'timeout',
    },
    { name: 'untrusted certificate', err: socketError('DEPTH_ZERO_SELF_SIGNED_CERT'), reason: 'tls_error' },
    { name: 'certificate for another host', err: socketError('ERR_TLS_CERT_ALTNAME_INVALID'), reason: 'tls_error' },
    { name: 'a blocked address', err: socketError('PLINTH_BLOCKED_ADDRESS'), reason: 'blocked_address' },
    { name: 'anything else', err: 'a string', reason: 'unreachable' },
  ]
  for (const row of rows) {
    it(`${row.name} → ${row.reason}`, () => {
      const result = describeFailure(row.err)
      expect(result).toMatchObject({ success: false, reason: row.reason, message: expect.any(String) })
      if (row.remoteStatus !== undefined) expect(result).toMatchObject({ remoteStatus: row.remoteStatus })
      if (row.remoteCode !== undefined) expect(result).toMatchObject({ remoteCode: row.remoteCode })
      // Nothing of the thrown error's own text leaves.
      expect(JSON.stringify(result)).not.toMatch(/the-secret|StringToSign|10\.0\.0\.1/)
    })
  }
})

describe('createS3Probe without ALLOW_PRIVATE_NETWORK', () => {
  const probe = createS3Probe({ allowPrivateNetwork: false })
  for (const endpoint of [
    'http://127.0.0.1:1',
    'http://[::1]:1',
    'http://169.254.169.254',
    'http://localhost:1',
    'http://[::ffff:0:127.0.0.1]:1',
    'http://[2002:7f00:1::]:1',
  ]) {
    it(`refuses ${endpoint} before connecting`, async () => {
      expect(await probe(target(endpoint))).toMatchObject({ success: false, reason: 'blocked_address' })
    })
  }
})
