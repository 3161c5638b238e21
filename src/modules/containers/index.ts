export { createContainersModule } from './module.js'
export type { Container } from './schemas.js'
export { acceptsType } from './rules.js'
export {
  CONTAINERS_RESOURCE,
  createContainersService,
  type ContainersDeps,
  type ContainersService,
  type ContainerUsage,
  type ContainerEvents,
} from './service.js'
export { containerCreateShape } from './create-shape.js'
