import { z } from '../../lib/http/index.js'
import { diagnosticSeverity } from './document/diagnostics.js'
import { paramTypes } from './document/params.js'

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

export type ValidateRequest = z.infer<typeof ValidateRequestSchema>
export type ValidateResult = z.infer<typeof ValidateResultSchema>
