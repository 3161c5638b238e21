import { listOption, paramsOption, parseCommand, planOptions, type Parsed } from './args.js'
import type { Client } from './client.js'
import { clientFor, printJson, showHelp, type Context } from './context.js'
import { help } from './help.js'
import { readDocument, type DocumentBody, type DocumentInput } from './input.js'
import { formatPlan } from './print.js'
import type { PlanResult, ValidateResult } from './types.js'

/** The body of a plan (and of an install, which takes the same fields and more). */
export type PlanRequest = DocumentBody & {
  params?: Record<string, unknown>
  assemblies?: string[]
  secretsProvided?: string[]
}

type Declared = NonNullable<ValidateResult['blueprint']['params']>

/** Where a secret parameter's value comes from: the environment, never a flag (it would land in shell history). */
export const secretEnvPrefix = 'PLINTH_SECRET_'

/** The document's parameter declarations, as the instance's validation reads them. */
async function declaredParams(client: Client, body: DocumentBody): Promise<Declared> {
  const reply = (await client.request('POST', '/api/v1/blueprints/validate', body)) as { data: ValidateResult }
  return reply.data.blueprint.params ?? []
}

/**
 * `--param` values typed as the document declares them: the command line gives only strings, and a number
 * or boolean parameter takes a JSON number or boolean. A value that does not convert, or a parameter not
 * declared, is sent as given, for the server to refuse or ignore by name.
 */
export function typeParams(declared: Declared, params: Record<string, string>): Record<string, unknown> {
  const types = new Map(declared.map((p) => [p.name, p.type]))
  const typed: Record<string, unknown> = {}
  for (const [name, text] of Object.entries(params)) {
    const type = types.get(name)
    if (type === 'number' && text.trim() !== '' && Number.isFinite(Number(text))) typed[name] = Number(text)
    else if (type === 'boolean' && (text === 'true' || text === 'false')) typed[name] = text === 'true'
    else typed[name] = text
  }
  return typed
}

/** The values of the declared secret parameters that the environment holds as PLINTH_SECRET_<name>. */
export function secretsFromEnv(declared: Declared, env: Record<string, string | undefined>): Record<string, string> {
  const secrets: Record<string, string> = {}
  for (const p of declared) {
    const value = env[`${secretEnvPrefix}${p.name}`]
    if (p.secret && value) secrets[p.name] = value
  }
  return secrets
}

/**
 * The plan request the flags describe, and the secret values the environment gives (sent by install only;
 * a plan counts them as provided). The document's declarations are asked for only when a --param needs
 * typing or a PLINTH_SECRET_ variable is set.
 */
export async function planRequest(
  client: Client,
  input: DocumentInput,
  parsed: Parsed,
  env: Record<string, string | undefined>,
): Promise<{ request: PlanRequest; secrets: Record<string, string> }> {
  const params = paramsOption(parsed)
  const assemblies = listOption(parsed, 'assemblies')
  const givesSecrets = Object.keys(env).some((name) => name.startsWith(secretEnvPrefix) && env[name])
  const declared = params || givesSecrets ? await declaredParams(client, input.body) : []
  const secrets = secretsFromEnv(declared, env)
  const provided = [...new Set([...(listOption(parsed, 'secrets-provided') ?? []), ...Object.keys(secrets)])]
  const request: PlanRequest = {
    ...input.body,
    ...(params ? { params: typeParams(declared, params) } : {}),
    ...(assemblies ? { assemblies } : {}),
    ...(provided.length > 0 || parsed.values['secrets-provided'] !== undefined ? { secretsProvided: provided } : {}),
  }
  return { request, secrets }
}

/** Reads the file named on the command line and asks for its plan; the context learns the file's name. */
export async function fetchPlan(
  ctx: Context,
  client: Client,
  parsed: Parsed,
): Promise<{
  input: DocumentInput
  request: PlanRequest
  secrets: Record<string, string>
  plan: PlanResult
  reply: unknown
}> {
  const input = await readDocument(parsed.positionals[0], ctx.io.stdin)
  ctx.file = input.label
  const { request, secrets } = await planRequest(client, input, parsed, ctx.io.env)
  const reply = (await client.request('POST', '/api/v1/blueprints/plan', request)) as { data: PlanResult }
  return { input, request, secrets, plan: reply.data, reply }
}

/** `plinth blueprint plan <file>`: 0 when installable, 1 for an error diagnostic or a BLOCKED brick. */
export async function planCommand(argv: string[], ctx: Context): Promise<number> {
  const parsed = parseCommand(argv, planOptions, 1)
  if (parsed.values.help) return showHelp(ctx, help.plan)
  const client = clientFor(ctx, parsed)
  const { input, plan, reply } = await fetchPlan(ctx, client, parsed)
  if (ctx.json) printJson(ctx, reply)
  else ctx.io.stdout.write(formatPlan(input.label, plan, ctx.colours))
  return plan.installable ? 0 : 1
}
