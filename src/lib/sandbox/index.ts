export {
  runInSandbox,
  SandboxFetchError,
  type SandboxFailureKind,
  type SandboxFetchRequest,
  type SandboxFetchResponse,
  type SandboxLogLine,
  type SandboxOptions,
  type SandboxResult,
} from './quickjs.js'
export { runIsolated } from './isolated.js'
