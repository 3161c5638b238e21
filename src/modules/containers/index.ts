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
/** The create and update bodies as their routes take them (blueprint bricks are parsed by the same schemas). */
export { CreateContainerSchema, UpdateContainerSchema } from './schemas.js'
