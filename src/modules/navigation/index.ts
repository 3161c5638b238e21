export { createNavigationModule } from './module.js'
export type { NavigationItem, NavigationNode } from './schemas.js'
export {
  createNavigationService,
  NAVIGATION_RESOURCE,
  type NavigationDeps,
  type NavigationEvents,
  type NavigationService,
} from './service.js'
export { navigationTargetKinds, type NavigationTargetKind } from './targets.js'
export { navigationItemCreateShape } from './create-shape.js'
/** The create and update bodies as their routes take them (blueprint bricks are parsed by the same schemas). */
export { CreateNavigationItemSchema, UpdateNavigationItemSchema } from './schemas.js'
