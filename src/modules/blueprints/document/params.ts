import { isMap, isScalar, isSeq, type Node } from 'yaml'
import { diagnostic, type Diagnostic } from './diagnostics.js'
import { offsetOf } from './yaml-read.js'

/** The parameter types of the envelope (§ Blueprint document). */
export const paramTypes = ['identifier', 'string', 'email', 'url', 'number', 'boolean', 'secret'] as const
export type ParamType = (typeof paramTypes)[number]

/** One declared parameter, as the envelope's `params` list gives it. */
export interface ParamDecl {
  readonly name: string
  readonly type: ParamType
  readonly namespace: boolean
  /** Whether a default was given (a default may be any scalar, `null` included, so its presence is kept apart). */
  readonly hasDefault: boolean
  readonly default: string | number | boolean | null | undefined
  readonly line: number | null
}

/** What reading part of the envelope needs: the document line of a front-matter offset, and where findings go. */
export interface EnvelopeReadContext {
  lineAt(offset: number): number
  report(d: Diagnostic): void
}

/** A parameter name: what `${params.<name>}` may name. */
export const paramName = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

/** Rule 6: an identifier value is a lowercase letter followed by up to eleven lowercase letters, digits or underscores. */
export const identifierValue = /^[a-z][a-z0-9_]{0,11}$/

const paramKeys = new Set(['name', 'type', 'namespace', 'default'])
const email = /^[^\s@]{1,64}@[^\s@.]+(?:\.[^\s@.]+)+$/

/**
 * Why a value does not fit a parameter, or null when it does. Used for defaults here and for the values a
 * plan or an install is given; a secret parameter takes no value at all (its value never reaches the server
 * through a document or a plan).
 */
export function paramValueProblem(param: Pick<ParamDecl, 'name' | 'type'>, value: unknown): string | null {
  const is = `${param.name} (${param.type})`
  switch (param.type) {
    case 'secret':
      return `${param.name} is a secret parameter: its value is never given here`
    case 'identifier':
      return typeof value === 'string' && identifierValue.test(value)
        ? null
        : `${is} must be a lowercase letter followed by up to eleven lowercase letters, digits or underscores`
    case 'string':
      return typeof value === 'string' && value.length <= 10_000
        ? null
        : `${is} must be a string of at most 10000 characters`
    case 'email':
      return typeof value === 'string' && value.length <= 254 && email.test(value)
        ? null
        : `${is} must be an email address`
    case 'url':
      return typeof value === 'string' && isHttpUrl(value) ? null : `${is} must be an absolute http or https URL`
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : `${is} must be a number`
    case 'boolean':
      return typeof value === 'boolean' ? null : `${is} must be true or false`
  }
}

function isHttpUrl(value: string): boolean {
  if (value.length > 2000) return false
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}

/**
 * The envelope's `params` list (rules 1, 2 and 6): each entry is {name, type, namespace?, default?}; exactly
 * one carries `namespace: true` and it is an identifier; a secret carries no default; a default fits its type.
 * Returns the declarations that could be read; every problem is reported.
 */
export function readParams(
  node: Node | null | undefined,
  keyLine: number | null,
  ctx: EnvelopeReadContext,
): ParamDecl[] {
  const params: ParamDecl[] = []
  if (node !== undefined && node !== null && !(isScalar(node) && node.value === null) && !isSeq(node)) {
    ctx.report(diagnostic('params.invalid', 'params must be a list of parameters', ctx.lineAt(offsetOf(node))))
    return params
  }
  const names = new Set<string>()
  for (const item of isSeq(node) ? node.items : []) {
    const param = readParam(item as Node, ctx)
    if (!param) continue
    if (names.has(param.name)) {
      ctx.report(diagnostic('params.invalid', `the parameter ${param.name} is declared twice`, param.line))
      continue
    }
    names.add(param.name)
    params.push(param)
  }
  const namespaces = params.filter((p) => p.namespace)
  if (namespaces.length === 0) {
    ctx.report(
      diagnostic('params.no_namespace', 'exactly one parameter must carry namespace: true; none does', keyLine),
    )
  }
  for (const extra of namespaces.slice(1)) {
    ctx.report(
      diagnostic(
        'params.multiple_namespace',
        `exactly one parameter may carry namespace: true; ${namespaces[0]!.name} and ${extra.name} both do`,
        extra.line,
      ),
    )
  }
  return params
}

function readParam(item: Node, ctx: EnvelopeReadContext): ParamDecl | null {
  const line = ctx.lineAt(offsetOf(item))
  const refuse = (message: string, at = line) => {
    ctx.report(diagnostic('params.invalid', message, at))
    return null
  }
  if (!isMap(item)) return refuse('each parameter is a mapping of name, type, namespace and default')
  const fields = new Map<string, { value: unknown; line: number }>()
  for (const pair of item.items) {
    const key = String((pair.key as { value?: unknown }).value)
    const keyLine = ctx.lineAt(offsetOf(pair.key))
    if (!paramKeys.has(key))
      return refuse(`a parameter has no key ${key.slice(0, 80)} (name, type, namespace, default)`, keyLine)
    if (pair.value !== null && !isScalar(pair.value))
      return refuse(`the parameter's ${key} must be a single value`, keyLine)
    fields.set(key, { value: isScalar(pair.value) ? pair.value.value : null, line: keyLine })
  }
  const lineOf = (key: string) => fields.get(key)?.line ?? line
  const name = fields.get('name')?.value
  if (typeof name !== 'string' || !paramName.test(name)) {
    const message = 'a parameter name is a letter or underscore followed by letters, digits or underscores (at most 64)'
    return refuse(message, lineOf('name'))
  }
  const type = fields.get('type')?.value
  if (typeof type !== 'string' || !(paramTypes as readonly string[]).includes(type)) {
    return refuse(`the parameter ${name} needs a type: one of ${paramTypes.join(', ')}`, lineOf('type'))
  }
  const namespace = fields.get('namespace')?.value ?? false
  if (typeof namespace !== 'boolean') {
    return refuse(`the parameter ${name}'s namespace must be true or false`, lineOf('namespace'))
  }
  if (namespace && type !== 'identifier') {
    const message = `the namespace parameter ${name} must be of type identifier (it is part of resource names)`
    return refuse(message, lineOf('namespace'))
  }
  const given = fields.get('default')
  // A secret's default is refused and never kept: nothing read from here may carry it onward.
  const kept = given !== undefined && type !== 'secret'
  const param: ParamDecl = {
    name,
    type: type as ParamType,
    namespace,
    hasDefault: kept,
    default: kept ? (given.value as ParamDecl['default']) : undefined,
    line,
  }
  if (given !== undefined && type === 'secret') {
    ctx.report(diagnostic('params.secret_default', `the secret parameter ${name} may not carry a default`, given.line))
  } else if (given !== undefined) {
    const problem = paramValueProblem(param, given.value)
    if (problem) ctx.report(diagnostic('params.invalid_value', `default of ${problem}`, given.line))
  }
  return param
}
