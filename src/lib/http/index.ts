export type { AppBindings, AppEnv, AppVariables } from './env.js'
export { guard, principalOf, type RoutePermission, type Security } from './guard.js'
export { clientIp } from './client-ip.js'
export { requestIdOf, tagRequestId } from './request-id.js'
export { queryInteger, type QueryIntegerOptions } from './query-integer.js'
export { refuseProtoKey } from './proto-key.js'
export {
  createRouter,
  dataEnvelope,
  defineRoute,
  ErrorEnvelopeSchema,
  errorResponses,
  jsonBody,
  jsonContent,
  queryFlag,
  rejectInvalid,
  z,
  type RouteDeclaration,
} from './route.js'
