export { capabilityTokensRoutes } from './routes.js'
export {
  createCapabilityTokensService,
  grantsFor,
  maxExpiresIn,
  type CapabilityToken,
  type CapabilityTokensService,
  type ResolvedCapability,
} from './service.js'
export { capabilities, tokenPrefix, type Capability, type CapabilityClaims } from './token.js'
export { createCapabilityTokensModule } from './module.js'
