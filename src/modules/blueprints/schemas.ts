import { z } from '../../lib/http/index.js'
import { diagnosticSeverity } from './document/diagnostics.js'
import { paramTypes } from './document/params.js'
import { verdictNames } from './plan/verdicts.js'

const codes = Object.keys(diagnosticSeverity)

/** Validate (and, later, plan): exactly one of `source` or `archive`; the route's service checks that. */
export const ValidateRequestSchema = z
  .strictObject({
    source: z.string().optional().openapi({
      description: 'The blueprint document (Markdown with YAML front matter); at most 1,000,000 bytes (413 beyond)',
    }),
    archive: z.string().optional().openapi({
      description:
        'Instead of source: a base64 zip holding exactly one .ebp.md document (at most 4,000,000 bytes; refusals name details.code)',
    }),
  })
  .openapi('BlueprintDocumentInput')

export const DiagnosticSchema = z
  .object({
    severity: z.enum(['error', 'warning']),
    code: z.string().openapi({ description: 'A stable code (docs/blueprints.md lists them)', enum: codes }),
    message: z.string(),
    line: z.number().int().nullable().openapi({ description: '1-based line of the document, or null' }),
    brickId: z.string().nullable(),
  })
  .openapi('BlueprintDiagnostic')

export const ValidateResultSchema = z
  .object({
    ok: z.boolean().openapi({ description: 'No diagnostic is an error' }),
    diagnostics: z.array(DiagnosticSchema),
    blueprint: z.object({
      id: z.string().nullable(),
      name: z.string().nullable(),
      version: z.string().nullable(),
      publisher: z.null().openapi({ description: 'Always null: publisher is no longer part of the envelope' }),
      params: z.array(
        z.object({
          name: z.string(),
          type: z.enum(paramTypes),
          namespace: z.boolean(),
          required: z.boolean().openapi({ description: 'No default: a plan or install must give it' }),
          secret: z.boolean(),
        }),
      ),
      assemblies: z.array(
        z.object({ key: z.string(), title: z.string(), required: z.boolean(), bricks: z.array(z.string()) }),
      ),
    }),
    bricks: z.array(
      z.object({ id: z.string(), kind: z.string(), needs: z.array(z.string()), title: z.string().nullable() }),
    ),
  })
  .openapi('BlueprintValidation')

export const PlanRequestSchema = ValidateRequestSchema.extend({
  params: z
    .record(z.string(), z.unknown())
    .optional()
    .openapi({ description: 'Non-secret parameter values (undeclared keys ignored; a secret value is 400)' }),
  assemblies: z.array(z.string().max(100)).max(100).optional().openapi({
    description: 'The assemblies chosen; all when absent; required ones always',
  }),
  secretsProvided: z.array(z.string().max(64)).max(100).optional().openapi({
    description: 'Secret parameters the project already holds',
  }),
}).openapi('BlueprintPlanInput')

const FindingSchema = z.object({ code: z.string(), message: z.string() })

export const PlanResultSchema = z
  .object({
    ok: z.boolean(),
    installable: z.boolean().openapi({ description: 'ok, and no brick BLOCKED' }),
    diagnostics: z.array(DiagnosticSchema),
    blueprint: z.object({ id: z.string().nullable(), name: z.string().nullable(), version: z.string().nullable() }),
    coverage: z.object({ supported: z.array(z.string()), unsupported: z.array(z.string()) }),
    baseline: z
      .object({ installId: z.string(), version: z.string(), docHash: z.string() })
      .nullable()
      .openapi({ description: "The blueprint's live install the plan compares against (its ledger), or null" }),
    verdicts: z.array(
      z.object({
        brickId: z.string(),
        kind: z.string(),
        verdict: z.enum(verdictNames),
        reason: z.string().nullable(),
        changedPaths: z.array(z.string()),
        warnings: z.array(FindingSchema),
        resourceRef: z.string().nullable(),
        contentHash: z.string().nullable(),
        actionIds: z.array(z.string()),
        autoApply: z.boolean(),
        requiresConsent: z.boolean(),
      }),
    ),
    orphans: z.array(z.object({ brickId: z.string(), kind: z.string(), resourceRef: z.string() })),
    actions: z.array(
      z.object({
        id: z.string(),
        brickId: z.string(),
        method: z.enum(['POST', 'PATCH', 'PUT', 'DELETE']),
        path: z.string(),
        body: z.unknown(),
      }),
    ),
    missingSecrets: z.array(z.string()),
  })
  .openapi('BlueprintPlan')

export type PlanRequest = z.infer<typeof PlanRequestSchema>
export type ValidateRequest = z.infer<typeof ValidateRequestSchema>
export type ValidateResult = z.infer<typeof ValidateResultSchema>
