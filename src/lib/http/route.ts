import { createRoute, OpenAPIHono, z, type RouteConfig } from '@hono/zod-openapi'
import { AppError, type ErrorCode, errorStatus } from '../errors.js'
import type { Handler, MiddlewareHandler } from 'hono'
import type { AppEnv } from './env.js'
import { guard, type RoutePermission, type Security } from './guard.js'
import { requestValidation } from './validate.js'

/**
 * A route declaration: method, path, schemas, `operationId` and the permission it needs, in one value
 * that drives validation, the OpenAPI document and (with the access module) authorization.
 * `permission: null` marks a public route; the string form is `resource:action`.
 */
export type RouteDeclaration = RouteConfig & {
  operationId: string
  summary: string
  permission: RoutePermission
}

export function defineRoute<R extends RouteDeclaration>(route: R): R {
  return createRoute(route) as R
}

/**
 * What the API description says of a declared route: everything but `permission`, which is not an OpenAPI
 * key (a strict 3.1 validator refuses it). The permission is shown as `x-permission` (`public` when null),
 * and a route that reads a credential declares the `bearer` security requirement, so a client (the docs
 * page's Authorize button included) knows to send `Authorization`. Public routes declare none.
 */
function documentedRoute<R extends RouteConfig & { permission?: RoutePermission }>({
  permission = null,
  ...route
}: R): RouteConfig {
  return {
    ...route,
    'x-permission': permission ?? 'public',
    ...(permission === null ? {} : { security: [{ bearer: [] }] }),
  }
}

/**
 * A router for one module; mounted by the HTTP layer, which also renders errors. Every route registered
 * with `openapi()` gets the guard its declaration's `permission` asks for, before request validation,
 * so an unauthorised caller learns nothing from a 400.
 */
export function createRouter(security?: Security): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: rejectInvalid })
  const register = router.openapi
  router.openapi = ((route: RouteConfig & { permission?: RoutePermission }, handler: Handler<AppEnv>, hook?: never) => {
    const permission = route.permission ?? null
    if (permission !== null && !security)
      throw new Error(`${route.method} ${route.path} needs a permission but its router has no security`)
    const check = security ? guard(security, permission) : null
    const validate =
      route.middleware === undefined && hook === undefined ? requestValidation(route.request, rejectInvalid) : null
    if (!validate) {
      const middleware =
        route.middleware === undefined ? [] : Array.isArray(route.middleware) ? route.middleware : [route.middleware]
      const first: MiddlewareHandler<AppEnv>[] = check
        ? [
            async (c, next) => {
              await check(c)
              await next()
            },
          ]
        : []
      return register(
        { ...documentedRoute(route), middleware: [...first, ...middleware] } as never,
        handler as never,
        hook,
      )
    }
    // One handler per route: Hono's fast path, no middleware chain. Same order as before: the guard, so an
    // unauthorised caller learns nothing from a 400, then validation, then the handler.
    if (!route.hide) router.openAPIRegistry.registerPath(documentedRoute(route))
    router.on(route.method.toUpperCase(), route.path.replaceAll(/\/{(.+?)}/g, '/:$1'), async (c, next) => {
      if (check) await check(c)
      const body = validate(c) // a promise only when there is a JSON body to read
      if (body) await body
      return handler(c, next)
    })
    return router
  }) as typeof router.openapi
  return router
}

/** Failed request validation becomes 400 invalid_request naming each bad location. */
export function rejectInvalid(result: { success: boolean; target?: string; error?: unknown }): void {
  if (result.success) return
  const issues = (result.error as z.ZodError | undefined)?.issues ?? []
  throw new AppError('invalid_request', describeIssues(result.target, issues), {
    issues: issues.map((i) => ({ location: location(result.target, i.path), message: i.message })),
  })
}

function location(target: string | undefined, path: readonly PropertyKey[]): string {
  const where = target === 'json' || target === 'form' ? 'body' : target === 'param' ? 'path' : (target ?? 'request')
  return [where, ...path.map(String)].join('.')
}

function describeIssues(target: string | undefined, issues: readonly z.core.$ZodIssue[]): string {
  const first = issues[0]
  if (!first) return 'Invalid request'
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''
  return `${location(target, first.path)}: ${first.message}${more}`
}

export const ErrorEnvelopeSchema = z
  .object({
    error: z.string().openapi({ example: 'invalid_request' }),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
  })
  .openapi('Error')

/** OpenAPI response entries for the error codes a route may answer with. */
export function errorResponses(
  ...codes: ErrorCode[]
): Record<number, { description: string; content: { 'application/json': { schema: typeof ErrorEnvelopeSchema } } }> {
  const out: Record<
    number,
    { description: string; content: { 'application/json': { schema: typeof ErrorEnvelopeSchema } } }
  > = {}
  for (const code of codes) {
    const status = errorStatus[code]
    const existing = out[status]
    out[status] = {
      description: existing ? `${existing.description}, ${code}` : code,
      content: { 'application/json': { schema: ErrorEnvelopeSchema } },
    }
  }
  return out
}

/** A JSON response entry of a route declaration. */
export function jsonContent<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } }
}

/** A required JSON request body of a route declaration. */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { body: { required: true, content: { 'application/json': { schema } } } }
}

/** A boolean query parameter: `true`, `false`, `1` or `0`; anything else is a 400 naming it. */
export const queryFlag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')

/** `{ data: T }`, the single-item success envelope. */
export function dataEnvelope<T extends z.ZodType>(schema: T) {
  return z.object({ data: schema })
}

export { z }
