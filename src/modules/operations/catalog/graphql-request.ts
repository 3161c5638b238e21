import { z } from 'zod'
import { isOutboundError } from '../../../lib/outbound/index.js'
import { headers, hasHeader, send, stepErrorOf, timeoutMs, url } from '../outbound-step.js'
import { text } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'

/**
 * POSTs a GraphQL document (`{ query, variables, operationName }` as JSON) through lib/outbound and outputs
 * `{ data, errors, status }`. GraphQL reports its own errors in `errors` (often with a 200), so they are
 * output, not thrown; an answer that is no GraphQL response at all (not JSON, neither data nor errors)
 * fails the step with `invalid_response`.
 */
export const graphqlRequest = defineOperation({
  type: 'graphql_request',
  category: 'network',
  label: 'GraphQL request',
  description:
    'Sends a GraphQL query or mutation (POST, JSON); output { data, errors, status }. Private and internal addresses are refused.',
  effects: 'writes',
  configSchema: z.strictObject({
    url: url(),
    query: text(100_000, 1).describe('The GraphQL document'),
    variables: z.record(z.string(), z.unknown()).optional().describe('Variables of the document'),
    headers: headers().optional(),
    operationName: text(200).optional().describe('Which operation of the document to run'),
    timeout_ms: timeoutMs(),
  }),
  async run(config, ctx) {
    const requestHeaders: Record<string, string> = { ...config.headers }
    if (!hasHeader(requestHeaders, 'content-type')) requestHeaders['content-type'] = 'application/json'
    if (!hasHeader(requestHeaders, 'accept'))
      requestHeaders.accept = 'application/graphql-response+json, application/json'
    const payload = {
      query: config.query,
      ...(config.variables ? { variables: config.variables } : {}),
      ...(config.operationName ? { operationName: config.operationName } : {}),
    }
    const res = await send(ctx, config.url, {
      method: 'POST',
      headers: requestHeaders,
      body: JSON.stringify(payload),
      timeoutMs: config.timeout_ms,
    })
    let answer: unknown
    try {
      answer = res.json()
    } catch (err) {
      if (isOutboundError(err)) throw stepErrorOf(err)
      throw invalidResponse(res.status, 'the response is not JSON')
    }
    if (
      typeof answer !== 'object' ||
      answer === null ||
      Array.isArray(answer) ||
      !('data' in answer || 'errors' in answer)
    ) {
      throw invalidResponse(res.status, 'the response has neither data nor errors')
    }
    const { data, errors } = answer as { data?: unknown; errors?: unknown }
    return {
      data: data ?? null,
      errors: Array.isArray(errors) ? errors : errors === undefined || errors === null ? [] : [errors],
      status: res.status,
    }
  },
})

function invalidResponse(status: number, why: string): StepError {
  // A server error may well pass on retry; a 2xx/4xx that is no GraphQL will not.
  return new StepError(
    'invalid_response',
    `The GraphQL server answered ${status}, and ${why}`,
    { status },
    502,
    status >= 500,
  )
}
