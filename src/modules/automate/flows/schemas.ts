import { z } from '../../../lib/http/index.js'
import { boundTriggerConfig, FlowOptionsSchema, flowStatuses, RunAsSchema, StepSchema } from '../model.js'
import { triggerTypes } from '../triggers/registry.js'
import { componentRef, publishedNames } from './published-names.js'
import { maxWarnings, preflightCodes } from './preflight.js'

/** The wire shapes of /api/v1/automate/flows; the service parses its input with them too (422 validation_error). */

const name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters')
const description = z.string().max(5000, 'must be at most 5000 characters')
const icon = z
  .string()
  .regex(/^[a-z0-9_]{1,64}$/, 'must be a Material icon name (1-64 lower-case letters, digits or _)')
const color = z
  .string()
  .regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/, 'must be a hex colour such as #6750a4')
const triggerType = z.enum(triggerTypes)
const triggerConfig = z
  .record(z.string(), z.unknown())
  .superRefine(boundTriggerConfig)
  .openapi({ description: 'Trigger-specific; checked against the trigger type (automation spec "Trigger types")' })
// The registry bounds the whole flow (nested steps included); this only bounds the request.
const operations = z.array(StepSchema).max(500, 'at most 500 steps')
// Unknown option keys are refused, not dropped: a misspelt option would otherwise vanish silently.
const options = FlowOptionsSchema.strict()
// PATCH merges the options sent over the stored ones: the same checks, no defaults filled in.
const optionsPatch = z.strictObject(
  Object.fromEntries(
    Object.entries(FlowOptionsSchema.shape).map(([key, schema]) => [
      key,
      (schema as z.ZodDefault<z.ZodType>).unwrap().optional(),
    ]),
  ),
)
const collections = z.array(z.string().min(1).max(100)).max(100, 'at most 100 collections')
export const slugSchema = z
  .string()
  .regex(
    /^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$/,
    'must be 1-100 lower-case letters, digits or -, not starting or ending with -',
  )

export const defaults = { description: '', icon: 'bolt', color: '#6750a4', collections: ['*'] } as const

export const CreateFlowSchema = z.strictObject({
  name,
  description: description.default(defaults.description),
  icon: icon.default(defaults.icon),
  color: color.default(defaults.color),
  triggerType,
  triggerConfig,
  operations,
  options: options.default(FlowOptionsSchema.parse({})),
  collections: collections.default([...defaults.collections]),
})
export type CreateFlowInput = z.input<typeof CreateFlowSchema>

export const PatchFlowSchema = z.strictObject({
  name: name.optional(),
  description: description.optional(),
  icon: icon.optional(),
  color: color.optional(),
  triggerType: triggerType.optional(),
  triggerConfig: triggerConfig.optional(),
  operations: operations.optional(),
  options: optionsPatch
    .optional()
    .openapi({ description: 'The options sent replace those stored; the others are kept' }),
  collections: collections.optional(),
  runAs: RunAsSchema.optional(),
})
export type PatchFlowInput = z.input<typeof PatchFlowSchema>

export const DuplicateFlowSchema = z.strictObject({ name: name.optional() })
export const StatusSchema = z.strictObject({ status: z.enum(flowStatuses) })
export const PublishSchema = z.strictObject({
  changeSummary: z.string().max(1000, 'must be at most 1000 characters').default(''),
})

export const exportFormat = 'plinth-flow-v1'

/** The portable flow document (GET /flows/:id/export, POST /flows/import); credentials masked. */
// The create body plus the document's format and slug: one shape, so a field added to flows reaches both.
export const FlowDocumentSchema = CreateFlowSchema.extend({
  format: z.literal(exportFormat),
  slug: slugSchema.optional(),
})
export type FlowDocumentInput = z.input<typeof FlowDocumentSchema>

// A stored flow as the document publishes it: its steps are the FlowStep union and its trigger config one of the
// triggers' (published-schemas.ts registers them with the flows routes). Only the document: a response is not parsed.
const Step = z.record(z.string(), z.unknown()).openapi({ type: 'object', oneOf: [componentRef(publishedNames.step)] })
const storedTriggerConfig = z.record(z.string(), z.unknown()).openapi({
  type: 'object',
  description: "The trigger type's config (credentials masked)",
  anyOf: triggerTypes.map((type) => componentRef(publishedNames.triggerConfigOf(type))),
})

export const FlowSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    slug: z.string(),
    name: z.string(),
    description: z.string(),
    icon: z.string(),
    color: z.string(),
    status: z.enum(flowStatuses),
    triggerType,
    triggerConfig: storedTriggerConfig,
    operations: z.array(Step),
    options: z.record(z.string(), z.unknown()).openapi({ description: 'Every option, defaults filled in' }),
    collections: z.array(z.string()),
    createdBy: z.string().nullable(),
    runAs: z.string(),
    publishedBy: z.string().nullable().openapi({
      description:
        "Who made the published version the one that runs (publish, rollback): a person's id, or key:<id>. No run acts beyond their rights (decision 045)",
    }),
    currentVersion: z
      .number()
      .int()
      .openapi({ description: 'The highest version published so far (0 before the first publish)' }),
    publishedVersion: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'The version triggers run (null until the first publish)' }),
    lastRunAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    runCount: z.number().int(),
    errorCount: z.number().int(),
    system: z.boolean().openapi({
      description:
        'A system-managed flow: it can be read and paused (status active or inactive), not edited, published or deleted (409 system_flow_readonly); it runs as the system',
    }),
  })
  .openapi('Flow')

export const FlowWarningSchema = z
  .object({
    code: z.enum(preflightCodes).openapi({
      description:
        'permission_missing: whom the runs act as (the public role of a webhook, the flow owner, a delegated role) lacks the permission; publisher_permission_missing: the publisher lacks it, and runs never act beyond the publisher; runs_as_unknown: the runs act as whoever sets them off, unknown ahead; collection_missing: the project has no such collection',
    }),
    step: z.string().openapi({ description: "The step's key (nested steps included)" }),
    type: z.string().openapi({ description: "The step's operation type" }),
    permission: z
      .string()
      .openapi({ description: 'The permission the step needs', example: 'collections/notes:create' }),
    collection: z.string().nullable().openapi({ description: 'The collection the step names, if any' }),
    runsAs: z
      .string()
      .openapi({ description: 'Whom the runs act as, in words', example: 'the anonymous caller (role public)' }),
    message: z.string(),
    fix: z
      .string()
      .openapi({ description: 'What to do: set runAs, add a grant, publish as someone else, create the collection' }),
  })
  .openapi('FlowWarning', {
    description:
      'A preflight warning (decision 053): what runs of the published version would likely fail on. Warnings never refuse a publish or an activation.',
  })

const warnings = z
  .array(FlowWarningSchema)
  .max(maxWarnings)
  .openapi({
    description: `The preflight of the published version, at most ${maxWarnings} (empty before the first publish and for system-managed flows)`,
  })

export const PublishedSchema = z.object({ version: z.number().int(), warnings }).openapi('FlowPublished')

export const FlowDetailSchema = FlowSchema.extend({
  publishedOperations: z
    .array(Step)
    .nullable()
    .openapi({ description: "The published version's steps (null until the first publish)" }),
  webhookEndpoint: z
    .object({ url: z.string(), token: z.string(), methods: z.array(z.string()) })
    .nullable()
    .openapi({ description: 'Webhook-triggered flows only (null otherwise)' }),
  warnings,
  missingCredentials: z
    .array(
      z.object({
        step: z
          .string()
          .nullable()
          .openapi({ description: "The step's key (nested steps included); null for the trigger" }),
        path: z
          .string()
          .openapi({ description: 'Where the value goes: config.auth.token under the step, or triggerConfig.secret' }),
      }),
    )
    .openapi({
      description:
        'Credentials the draft lacks (masked values dropped on import, copy or create where nothing was stored): publish is refused with 422 validation_error until each is given (decision 052)',
    }),
}).openapi('FlowDetail')

export const VersionSummarySchema = z
  .object({
    version: z.number().int(),
    changeSummary: z.string(),
    createdAt: z.string(),
    createdBy: z.string().nullable(),
  })
  .openapi('FlowVersionSummary')
export const VersionSchema = VersionSummarySchema.extend({
  snapshot: z
    .record(z.string(), z.unknown())
    .openapi({ description: 'name, triggerType, triggerConfig, operations, options, collections, runAs as published' }),
}).openapi('FlowVersion')

export const AssignableRoleSchema = z
  .object({ id: z.string(), name: z.string(), description: z.string(), runAs: z.string() })
  .openapi('AssignableRole')
