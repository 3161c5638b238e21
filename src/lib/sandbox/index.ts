export { runInSandbox } from './quickjs.js'
export {
  SandboxFetchError,
  type SandboxFailureKind,
  type SandboxFetchRequest,
  type SandboxFetchResponse,
  type SandboxLogLine,
  type SandboxOptions,
  type SandboxResult,
} from './types.js'
export { runIsolated } from './isolated.js'
export { createAdmission, machineAdmissionLimits, type Admission, type AdmissionLimits } from './admission.js'
export { linearMemoryBytes } from './memory.js'
export { perScriptOverheadBytes, reservationBytes } from './isolated.js'
