export type { AppEnv, AppVariables } from './env.js'
export { createRouter, dataEnvelope, defineRoute, ErrorEnvelopeSchema, errorResponses, rejectInvalid, z, type RouteDeclaration } from './route.js'
