import { z } from '../../../lib/http/index.js'
import { PlanRequestSchema } from '../schemas.js'

export const InstallRequestSchema = PlanRequestSchema.extend({
  consent: z.array(z.string().max(100)).max(500).optional().openapi({
    description:
      'Brick ids whose requiresConsent verdicts the installer accepts (?apply=true applies only these of them)',
  }),
  secrets: z.record(z.string().max(64), z.string().max(10_000)).optional().openapi({
    description:
      'With ?apply=true only: the values of the secret parameters the writes use; handed to the services, never stored or answered',
  }),
}).openapi('BlueprintInstallInput')
export type InstallRequest = z.output<typeof InstallRequestSchema>

export const SettleRequestSchema = z
  .strictObject({
    outcomes: z
      .array(
        z.strictObject({
          resourceId: z.string().max(100),
          ok: z.boolean().optional(),
          error: z.string().max(2000).optional(),
          skipped: z.boolean().optional(),
        }),
      )
      .max(1000),
    final: z.boolean().optional().openapi({ description: 'The last report: rows still pending fail and the run ends' }),
  })
  .openapi('BlueprintSettleInput')
export type SettleRequest = z.output<typeof SettleRequestSchema>

export const UninstallRequestSchema = z
  .strictObject({
    removed: z.array(z.string().max(100)).max(1000).optional().openapi({
      description: 'Resource row ids the caller removed itself (rolled_back); the others are let go (detached)',
    }),
  })
  .openapi('BlueprintUninstallInput')
export type UninstallRequest = z.output<typeof UninstallRequestSchema>

const ResourceSchema = z.object({
  id: z.string(),
  brickId: z.string(),
  brickKind: z.string(),
  resourceKind: z.string(),
  verdict: z.string(),
  resourceRef: z.string().nullable(),
  status: z.enum(['pending', 'settled', 'failed', 'skipped', 'rolled_back', 'detached']),
  contentHash: z.string().nullable(),
  error: z.string().nullable(),
})

const ActionSchema = z.object({
  id: z.string(),
  brickId: z.string(),
  method: z.enum(['POST', 'PATCH', 'PUT', 'DELETE']),
  path: z.string(),
  body: z.unknown(),
})

export const InstallSchema = z
  .object({
    id: z.string(),
    blueprintId: z.string(),
    namespace: z
      .string()
      .openapi({ description: 'The namespace parameter value: a blueprint installs once per namespace' }),
    name: z.string(),
    version: z.string(),
    status: z.enum(['in_progress', 'partial', 'complete', 'superseded', 'uninstalled']),
    mode: z.enum(['client', 'server']),
    docHash: z.string(),
    params: z.record(z.string(), z.unknown()),
    secrets: z.array(z.string()).openapi({ description: 'Secret parameters, by name only' }),
    assemblies: z.array(z.string()),
    consent: z.array(z.string()),
    createdBy: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
    supersedes: z.string().nullable(),
    supersededBy: z.string().nullable(),
    resources: z.array(ResourceSchema),
    actions: z.array(ActionSchema).optional().openapi({ description: 'On a two-phase open: the calls to make' }),
  })
  .openapi('BlueprintInstall')

export const UninstallPreviewSchema = z
  .object({
    install: InstallSchema,
    resources: z.array(
      ResourceSchema.extend({ present: z.boolean().openapi({ description: 'Whether it is still there to remove' }) }),
    ),
    actions: z.array(ActionSchema.omit({ brickId: true }).extend({ resourceId: z.string() })),
  })
  .openapi('BlueprintUninstallPreview')
