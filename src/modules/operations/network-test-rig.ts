import type { ServerResponse } from 'node:http'
import { isBlockedAddress } from '../../lib/outbound/address.js'
import { createOutboundClient } from '../../lib/outbound/index.js'
import { startTestServer, tableResolver, type Received, type TestServer } from '../../lib/outbound/test-servers.js'
import { testContext, testServices } from './test-context.js'
import type { OperationContext } from './types.js'

/**
 * The network operations' test rig: a receiving server on 127.0.0.1 reached as `receiver.test` (the one
 * host the address rule lets through), `private.test` resolving to 127.0.0.1 and `metadata.test` to
 * 169.254.169.254 (both refused), and a context whose `services.outbound` is the real guarded client.
 */
export async function networkRig(handle: (req: Received, res: ServerResponse) => void) {
  const server: TestServer = await startTestServer(handle)
  const resolve = tableResolver({
    'receiver.test': ['127.0.0.1'],
    'private.test': ['127.0.0.1'],
    'metadata.test': ['169.254.169.254'],
  })
  const outbound = createOutboundClient({
    allowPrivateNetwork: false,
    resolve,
    isBlocked: (address, host) => host !== 'receiver.test' && isBlockedAddress(address),
  })
  const base = `http://receiver.test:${server.port}`
  function context(data: Record<string, unknown> = {}, signal?: AbortSignal) {
    const made = testContext(data, signal ? { signal } : {})
    const ctx: OperationContext = { ...made.ctx, services: testServices({ outbound }) }
    return { ...made, ctx }
  }
  return { server, base, context, close: () => server.close() }
}
