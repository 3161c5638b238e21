import type { OperationDefinition } from '../types.js'
import { buildSearchIndex } from './build-search-index.js'
import { aiClassify } from './ai-classify.js'
import { aiExtract } from './ai-extract.js'
import { aiGenerate } from './ai-generate.js'
import { aiImage } from './ai-image.js'
import { aiReview } from './ai-review.js'
import { aiSummarize } from './ai-summarize.js'
import { aiTranslate } from './ai-translate.js'
import { condition } from './condition.js'
import { crudAction } from './crud-action.js'
import { crudCreate } from './crud-create.js'
import { crudDelete } from './crud-delete.js'
import { crudQuery } from './crud-query.js'
import { crudRead } from './crud-read.js'
import { crudUpdate } from './crud-update.js'
import { datetime } from './datetime.js'
import { delay } from './delay.js'
import { fileRead } from './file-read.js'
import { fileTransform } from './file-transform.js'
import { fileUpload } from './file-upload.js'
import { graphqlRequest } from './graphql-request.js'
import { httpRequest } from './http-request.js'
import { jsonParse } from './json-parse.js'
import { log } from './log.js'
import { loop } from './loop.js'
import { math } from './math.js'
import { renderLensTemplate } from './render-lens-template.js'
import { runExpression } from './run-expression.js'
import { runScript } from './run-script.js'
import { sendEmail } from './send-email.js'
import { sendNotification } from './send-notification.js'
import { s3Action } from './s3-action.js'
import { setVariable } from './set-variable.js'
import { stop } from './stop.js'
import { systemArchival } from './system-archival.js'
import { systemLimitCheck } from './system-limit-check.js'
import { systemMonthlySummary } from './system-monthly-summary.js'
import { switchOperation } from './switch.js'
import { textFormat } from './text-format.js'
import { throwError } from './throw-error.js'
import { transform } from './transform.js'
import { triggerFlow } from './trigger-flow.js'
import { webhookDispatch } from './webhook-dispatch.js'

/**
 * The catalog, in the order the catalog endpoint lists it (automation spec "Operation configurations";
 * issue 15's first set: the rest are registered here by their own issues).
 */
export const operationCatalog: readonly OperationDefinition[] = Object.freeze([
  condition,
  stop,
  throwError,
  setVariable,
  math,
  log,
  delay,
  // Data (issue 16, ops-data).
  crudAction,
  crudCreate,
  crudRead,
  crudUpdate,
  crudDelete,
  crudQuery,
  // Network (issue 16, ops-network).
  httpRequest,
  graphqlRequest,
  webhookDispatch,
  // Script (issue 16, ops-scripts).
  runScript,
  runExpression,
  // Logic and transform (issue 16, ops-logic).
  loop,
  switchOperation,
  triggerFlow,
  transform,
  jsonParse,
  textFormat,
  datetime,
  // Communication: email (issue 17, email).
  sendEmail,
  // Search indexes (issue 17, searchidx).
  buildSearchIndex,
  // Communication: send_notification; System: the system flows' operations (issue 17, notify).
  sendNotification,
  systemArchival,
  systemLimitCheck,
  systemMonthlySummary,
  // AI (issue 17, ai).
  aiGenerate,
  aiClassify,
  aiExtract,
  aiSummarize,
  aiTranslate,
  aiReview,
  aiImage,
  // Lenses (issue 17, item 5).
  renderLensTemplate,
  // Files (issue 17, fileops).
  fileRead,
  fileUpload,
  fileTransform,
  s3Action,
])
