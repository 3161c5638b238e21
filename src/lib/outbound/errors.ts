/**
 * Why an outbound request failed, as a stable word flows map onto their step errors:
 * - `bad_url`: not an absolute http(s) URL, or one carrying a user name or password (also a redirect's Location);
 * - `bad_request`: a method or header the client will not send, or a limit that is not a positive number;
 * - `blocked_address`: the host is, or resolves to, an address the outbound policy refuses (any hop);
 * - `timeout`: no connection within the connect timeout, or no complete response within the total timeout;
 * - `aborted`: the caller's signal aborted (a `TimeoutError` reason counts as `timeout`);
 * - `too_large`: the response body is over the limit (by Content-Length, or counted while it streams);
 * - `too_many_redirects`: more redirects than allowed;
 * - `network`: anything else between the sockets (refused, reset, name not found, TLS, a corrupt body).
 */
export type OutboundErrorCode =
  | 'bad_url'
  | 'bad_request'
  | 'blocked_address'
  | 'timeout'
  | 'aborted'
  | 'too_large'
  | 'too_many_redirects'
  | 'network'

/**
 * The one error outboundFetch rejects with. The message names at most the host: never a path or query,
 * credentials or a header, so it may be logged and shown as it is.
 */
export class OutboundError extends Error {
  override name = 'OutboundError'
  constructor(
    readonly code: OutboundErrorCode,
    message: string,
    /** For `network`: the system or TLS error code (`ECONNREFUSED`, `CERT_HAS_EXPIRED`…), when there is one. */
    readonly networkCode: string | null = null,
  ) {
    super(message)
  }
}

export function isOutboundError(err: unknown): err is OutboundError {
  return err instanceof OutboundError
}
