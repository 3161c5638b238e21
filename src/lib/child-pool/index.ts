export { serveJobs, type EmitPart } from './child.js'
export {
  createChildPool,
  type ChildPool,
  type ChildPoolOptions,
  type PartFailure,
  type PartOutcome,
  type RunOptions,
} from './pool.js'
