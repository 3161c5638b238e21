export type { AppBindings, AppEnv, AppVariables } from './env.js'
export { requestIdOf, tagRequestId } from './request-id.js'
export { createRouter, dataEnvelope, defineRoute, ErrorEnvelopeSchema, errorResponses, rejectInvalid, z, type RouteDeclaration } from './route.js'
