import { z } from 'zod'
import { isOutboundError, type OutboundClient, type OutboundError } from '../../lib/outbound/index.js'
import { numeric, text } from './schema-helpers.js'
import { StepError, type OperationContext } from './types.js'

/**
 * What the network operations (http_request, graphql_request, webhook_dispatch) share: the outbound
 * client they reach through `ctx.services.outbound` (lib/outbound: the private-address rule on every hop,
 * redirects, timeouts, size), the spec's timeout range, headers, and how an outbound failure becomes a
 * typed step error.
 */

/** The part of `ctx.services` the network operations use (wired in app.ts). */
export interface NetworkServices {
  readonly outbound: OutboundClient
}

/** The outbound client of the run. */
export function outboundOf(ctx: OperationContext): OutboundClient {
  return ctx.services.outbound
}

/** timeout_ms of the three network operations: 100-30000 (10000). */
export const timeoutMs = () =>
  numeric(z.number().int().min(100).max(30_000))
    .default(10_000)
    .describe('Milliseconds for the whole exchange, redirects and body included (100-30000)')

/** Request headers: up to 50, names as HTTP tokens, values text (a template may give a number). */
export const headers = () =>
  z
    .record(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}$/, 'must be an HTTP header name'), text(8_192))
    .refine((value) => Object.keys(value).length <= 50, 'at most 50 headers')
    .describe('Request headers (name → value)')

/** A URL field: a template giving an absolute http(s) URL (checked again by lib/outbound when sent). */
export const url = () =>
  z
    .string()
    .min(1, 'Required')
    .max(8_192)
    .refine((value) => /^https?:\/\//i.test(value), 'must be an http:// or https:// URL')
    .describe('The URL (http or https; a template)')

// Failures the same request would meet again: not retried by onError retry.
const final = new Set(['bad_url', 'bad_request', 'blocked_address'])

/** A lib/outbound failure as the step's typed error (`timeout` is the spec's timed_out); the message names the host at most. */
export function stepErrorOf(err: OutboundError): StepError {
  const code = err.code === 'timeout' ? 'timed_out' : err.code === 'network' ? 'network_error' : err.code
  return new StepError(
    code,
    err.message,
    err.networkCode ? { networkCode: err.networkCode } : {},
    code === 'blocked_address' ? 403 : 502,
    !final.has(err.code),
  )
}

/** Sends through the run's outbound client with its signal; an outbound failure becomes a StepError. */
export async function send(ctx: OperationContext, target: string, init: Parameters<OutboundClient['fetch']>[1]) {
  try {
    return await outboundOf(ctx).fetch(target, { ...init, signal: ctx.signal })
  } catch (err) {
    if (isOutboundError(err)) throw stepErrorOf(err)
    throw err
  }
}

/** Response headers as an object (lower-case names; repeated ones joined by ", "). */
export function headersObject(given: Headers): Record<string, string> {
  return Object.fromEntries(given)
}

/** True when the headers already name `name` (any case). */
export function hasHeader(given: Record<string, string> | undefined, name: string): boolean {
  const lower = name.toLowerCase()
  return Object.keys(given ?? {}).some((key) => key.toLowerCase() === lower)
}
