import { AppError } from '../../lib/errors.js'
import type { OutboundSockets } from '../../lib/outbound/index.js'
import { createS3StorageOnClient, type ObjectStorage } from '../../lib/storage/index.js'
import { createS3Client, describeFailure, type S3Target } from './probe.js'

/** The refusal of an endpoint the outbound-address rule does not let this server reach. */
export function blockedAddress(): AppError {
  return new AppError(
    'forbidden',
    "The storage connection's endpoint is, or resolves to, a loopback, private or link-local address, which this server may not reach (ALLOW_PRIVATE_NETWORK is off)",
    { reason: 'blocked_address' },
  )
}

/**
 * A store failure on a connection in the connection test's words: a refused address is forbidden, the rest
 * service_unavailable with the reason, the store's status and its error code. Never the SDK's own text
 * (S3 error messages can quote signing material), not even as the logged cause.
 */
export function connectionStorageError(err: unknown): AppError {
  const result = describeFailure(err)
  if (result.success) return new AppError('service_unavailable', 'The storage connection answered unexpectedly')
  if (result.reason === 'blocked_address') return blockedAddress()
  const { reason, remoteStatus, remoteCode } = result
  return new AppError(
    'service_unavailable',
    `The storage connection's store failed: ${result.message}`,
    { reason, remoteStatus, remoteCode },
    { cause: new Error(`storage connection: ${reason} ${remoteStatus ?? '-'} ${remoteCode ?? '-'}`) },
  )
}

/**
 * A connection's bucket as object storage (lib/storage's S3 driver over the connection's own client): an
 * endpoint whose host is a refused literal or a loopback name is refused before anything is sent, and a
 * name resolves through the guarded lookup, so one resolving to a private address is refused at connect
 * (flows' s3_action's rule). Kept-alive sockets: the client is reused (connection-storages.ts). Throws forbidden.
 */
export async function openConnectionStorage(target: S3Target, sockets: OutboundSockets): Promise<ObjectStorage> {
  if (sockets.refusesHost(new URL(target.endpoint).hostname)) throw blockedAddress()
  const { client, close } = await createS3Client(target, {
    lookup: sockets.lookup,
    connectTimeoutMs: 5_000,
    timeoutMs: 120_000,
    keepAlive: true,
    // The SDK's standard retries: bodies are buffers (streams go in parts), so a retry resends them whole.
    maxAttempts: 3,
  })
  return createS3StorageOnClient(client, {
    bucket: target.bucketName,
    describeError: connectionStorageError,
    onClose: close,
  })
}
