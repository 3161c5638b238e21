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

/**
 * `--param` values typed as the document declares them: the command line gives only strings, and a number
 * or boolean parameter takes a JSON number or boolean. Asks the instance to validate the document for the
 * declarations; a value that does not convert is sent as given, for the server to refuse by name.
 */
export async function typedParams(
  client: Client,
  body: DocumentBody,
  params: Record<string, string>,
): Promise<Record<string, unknown>> {
  const reply = (await client.request('POST', '/api/v1/blueprints/validate', body)) as { data: ValidateResult }
  const types = new Map((reply.data.blueprint.params ?? []).map((p) => [p.name, p.type]))
  const typed: Record<string, unknown> = {}
  for (const [name, text] of Object.entries(params)) {
    const type = types.get(name)
    if (type === 'number' && text.trim() !== '' && Number.isFinite(Number(text))) typed[name] = Number(text)
    else if (type === 'boolean' && (text === 'true' || text === 'false')) typed[name] = text === 'true'
    else typed[name] = text
  }
  return typed
}

/** The plan request the flags describe. */
export async function planRequest(client: Client, input: DocumentInput, parsed: Parsed): Promise<PlanRequest> {
  const params = paramsOption(parsed)
  const assemblies = listOption(parsed, 'assemblies')
  const secretsProvided = listOption(parsed, 'secrets-provided')
  return {
    ...input.body,
    ...(params ? { params: await typedParams(client, input.body, params) } : {}),
    ...(assemblies ? { assemblies } : {}),
    ...(secretsProvided ? { secretsProvided } : {}),
  }
}

/** Reads the file named on the command line and asks for its plan; the context learns the file's name. */
export async function fetchPlan(
  ctx: Context,
  client: Client,
  parsed: Parsed,
): Promise<{ input: DocumentInput; request: PlanRequest; plan: PlanResult; reply: unknown }> {
  const input = await readDocument(parsed.positionals[0], ctx.io.stdin)
  ctx.file = input.label
  const request = await planRequest(client, input, parsed)
  const reply = (await client.request('POST', '/api/v1/blueprints/plan', request)) as { data: PlanResult }
  return { input, request, plan: reply.data, reply }
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
