import { z } from '../../../lib/http/index.js'
import { AllowedHostSchema } from '../../operations/index.js'

/** Bounds of a saved script (decision 033). */
export const scriptBounds = {
  maxCodeLength: 100_000,
  cpuMs: { min: 100, max: 30_000, default: 5_000 },
  memoryMb: { min: 1, max: 256, default: 64 },
} as const

const fields = {
  name: z.string().trim().min(1, 'Required').max(100).describe('Unique in the project'),
  description: z.string().max(1000).describe('What the script does'),
  code: z
    .string()
    .min(1, 'Required')
    .max(scriptBounds.maxCodeLength)
    .describe('The body of an async function of (input, context); its return value is the output'),
  allowed_hosts: z
    .array(AllowedHostSchema)
    .max(50)
    .describe('Hosts fetch may reach (`api.example.com`, `*.example.com`); empty blocks every fetch'),
  max_cpu_ms: z
    .number()
    .int()
    .min(scriptBounds.cpuMs.min)
    .max(scriptBounds.cpuMs.max)
    .describe('CPU time bound (100-30000 ms; the project quota caps it too)'),
  max_memory_mb: z
    .number()
    .int()
    .min(scriptBounds.memoryMb.min)
    .max(scriptBounds.memoryMb.max)
    .describe('Heap bound (1-256 MB)'),
}

export const ScriptCreateSchema = z.strictObject({
  name: fields.name,
  description: fields.description.default(''),
  code: fields.code,
  allowed_hosts: fields.allowed_hosts.default([]),
  max_cpu_ms: fields.max_cpu_ms.default(scriptBounds.cpuMs.default),
  max_memory_mb: fields.max_memory_mb.default(scriptBounds.memoryMb.default),
})
export type ScriptCreate = z.output<typeof ScriptCreateSchema>

export const ScriptPatchSchema = z.strictObject({
  name: fields.name.optional(),
  description: fields.description.optional(),
  code: fields.code.optional(),
  allowed_hosts: fields.allowed_hosts.optional(),
  max_cpu_ms: fields.max_cpu_ms.optional(),
  max_memory_mb: fields.max_memory_mb.optional(),
})
export type ScriptPatch = z.output<typeof ScriptPatchSchema>

/** The mock data of POST /scripts/:id/test: `input`, and the `context` a run would give (trigger, steps, user). */
export const ScriptTestSchema = z.strictObject({
  input: z.record(z.string(), z.unknown()).default({}),
  context: z
    .strictObject({
      trigger: z.unknown().optional(),
      steps: z.record(z.string(), z.unknown()).optional(),
      user: z.unknown().optional(),
    })
    .default({}),
})

export const ScriptSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    name: z.string(),
    description: z.string(),
    code: z.string(),
    allowed_hosts: z.array(z.string()),
    max_cpu_ms: z.number().int(),
    max_memory_mb: z.number().int(),
    createdBy: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('AutomateScript')

const LogLine = z.object({ level: z.enum(['debug', 'info', 'warn', 'error']), message: z.string() })
export const ScriptTestResultSchema = z
  .object({
    status: z.enum(['completed', 'failed']),
    output: z.unknown().optional(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
    logs: z.array(LogLine),
    cpuMs: z.number(),
    durationMs: z.number(),
  })
  .openapi('AutomateScriptTestResult')
