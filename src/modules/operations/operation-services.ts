import type { AiServices } from './ai-step.js'
import type { SearchIndexServices } from './catalog/build-search-index.js'
import type { SubFlowServices } from './catalog/trigger-flow.js'
import type { DataServices } from './data-ops.js'
import type { EmailServices } from './email-step.js'
import type { FileServices } from './file-ops.js'
import type { LensServices } from './lens-step.js'
import type { NotificationServices, SystemServices } from './notify-step.js'
import type { NetworkServices } from './outbound-step.js'
import type { ScriptServices } from './scripts.js'

/**
 * What a running operation reaches as `ctx.services`: the narrow interfaces each step declares beside its
 * code, joined (a service several steps use, records or files, must satisfy each of them). Whoever builds a
 * run's context builds one whole (decision 058): a service missing or renamed in the wiring is a type error
 * there, never a failed run.
 */
export type OperationServices = DataServices &
  SystemServices &
  NotificationServices &
  FileServices &
  LensServices &
  EmailServices &
  NetworkServices &
  AiServices &
  SearchIndexServices &
  ScriptServices &
  SubFlowServices
