import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { AppError } from '../../lib/errors.js'
import { principals } from '../../lib/principal.js'
import { operationCatalog } from './catalog/index.js'
import { createOperationRegistry } from './registry.js'
import { createOperationsService } from './service.js'
import { defineOperation } from './types.js'

/**
 * The spec's catalog, by category (automation spec "Operation configurations": the category list, the
 * System row, and render_lens_template "also documented"). Every type here exists in the registry and
 * nothing else does.
 */
const specCatalog: Record<string, string> = {
  crud_action: 'data',
  crud_create: 'data',
  crud_read: 'data',
  crud_update: 'data',
  crud_delete: 'data',
  crud_query: 'data',
  build_search_index: 'data',
  condition: 'logic',
  switch: 'logic',
  loop: 'logic',
  stop: 'logic',
  throw_error: 'logic',
  set_variable: 'logic',
  trigger_flow: 'logic',
  transform: 'transform',
  json_parse: 'transform',
  text_format: 'transform',
  math: 'transform',
  datetime: 'transform',
  log: 'transform',
  delay: 'transform',
  ai_generate: 'ai',
  ai_classify: 'ai',
  ai_extract: 'ai',
  ai_summarize: 'ai',
  ai_translate: 'ai',
  ai_review: 'ai',
  ai_image: 'ai',
  file_read: 'files',
  file_upload: 'files',
  file_transform: 'files',
  s3_action: 'files',
  http_request: 'network',
  graphql_request: 'network',
  webhook_dispatch: 'network',
  run_script: 'script',
  run_expression: 'script',
  send_email: 'communication',
  send_notification: 'communication',
  system_archival: 'system',
  system_limit_check: 'system',
  system_monthly_summary: 'system',
  // "render_lens_template is also documented", outside the category list: its category is issue 17's choice.
  render_lens_template: '(any)',
}

describe('the operations registry', () => {
  const registry = createOperationRegistry()
  const registered = new Set(registry.list().map((d) => d.type))

  it("holds every type of the spec's catalog", () => {
    const missing = Object.keys(specCatalog).filter((type) => !registered.has(type))
    expect(missing, 'spec types with no operation').toEqual([])
  })
  it('holds nothing the spec does not list', () => {
    expect(
      [...registered].filter((type) => !(type in specCatalog)),
      'registered types the spec does not list',
    ).toEqual([])
  })
  it('the spec list is the one the catalog sentence names (42 in categories plus render_lens_template)', () => {
    expect(Object.keys(specCatalog)).toHaveLength(43)
    expect(registry.list()).toHaveLength(43)
  })
  it("places each registered operation in the spec's category, system_* flagged system and nothing else", () => {
    for (const definition of registry.list()) {
      if (definition.type !== 'render_lens_template')
        expect(specCatalog[definition.type], definition.type).toBe(definition.category)
      expect(definition.system === true, definition.type).toBe(definition.type.startsWith('system_'))
    }
  })
  it('the first seven have no effects; reads and writes are declared where data is touched', () => {
    const effects = Object.fromEntries(registry.list().map((d) => [d.type, d.effects]))
    for (const type of ['condition', 'stop', 'throw_error', 'set_variable', 'math', 'log', 'delay'])
      expect(effects[type], type).toBe('none')
    expect(effects).toMatchObject({
      crud_read: 'reads',
      crud_query: 'reads',
      crud_create: 'writes',
      crud_update: 'writes',
      crud_delete: 'writes',
      crud_action: 'writes',
    })
  })
  it('finds by type', () => {
    expect(registry.get('math')?.label).toBe('Math')
    expect(registry.get('nope')).toBeUndefined()
    expect(registry.get('__proto__')).toBeUndefined()
  })
  it('refuses two definitions of one type', () => {
    const twin = defineOperation({
      type: 'math',
      category: 'transform',
      label: 'x',
      description: 'x',
      effects: 'none',
      configSchema: z.object({}),
      async run() {
        return null
      },
    })
    expect(() => createOperationRegistry([...operationCatalog, twin])).toThrow(
      /Two operations are registered as 'math'/,
    )
  })
  it('evaluates a step condition; none means the step runs', async () => {
    expect(await registry.evaluateCondition(undefined, {})).toBe(true)
    expect(await registry.evaluateCondition(null, {})).toBe(true)
    expect(
      await registry.evaluateCondition(
        { field: '$trigger.body.n', operator: 'gte', value: 2 },
        { $trigger: { body: { n: 2 } } },
      ),
    ).toBe(true)
  })
})

describe('the catalog service', () => {
  const allowed = new Set<string>()
  const access = {
    async authorize(_p: unknown, permission: string) {
      if (!allowed.has(permission)) throw new AppError('forbidden', `Missing ${permission}`)
    },
  }
  const service = createOperationsService({ access, registry: createOperationRegistry() })
  const actor = principals.system('p1', 'test')

  it('checks system/automate:read in every catalog method', async () => {
    allowed.clear()
    await expect(service.catalog(actor)).rejects.toMatchObject({ code: 'forbidden' })
    await expect(service.describe(actor, 'math')).rejects.toMatchObject({ code: 'forbidden' })
    allowed.add('system/automate:read')
    await expect(service.catalog(actor)).resolves.toHaveLength(createOperationRegistry().list().length)
  })
  it('derives form fields from the schemas', async () => {
    allowed.add('system/automate:read')
    const catalog = await service.catalog(actor)
    const delay = catalog.find((e) => e.type === 'delay')!
    expect(delay).toMatchObject({ name: 'Delay', category: 'transform', system: false })
    expect(delay.fields).toEqual([
      {
        name: 'ms',
        type: 'integer',
        required: false,
        default: 1000,
        min: 0,
        max: 25_000,
        description: 'Milliseconds to wait',
      },
    ])
    const math = catalog.find((e) => e.type === 'math')!
    expect(math.fields.map((f) => [f.name, f.type, f.required])).toEqual([
      ['operation', 'string', true],
      ['values', 'array', false],
      ['formula', 'string', false],
      ['precision', 'integer', false],
    ])
    expect(math.fields[0]!.options).toEqual(['sum', 'avg', 'min', 'max', 'round', 'floor', 'ceil', 'abs', 'formula'])
    const throwError = catalog.find((e) => e.type === 'throw_error')!
    expect(throwError.fields).toEqual([
      expect.objectContaining({ name: 'message', type: 'string', required: true, max: 2000 }),
      expect.objectContaining({
        name: 'statusCode',
        type: 'integer',
        required: false,
        default: 400,
        min: 100,
        max: 599,
      }),
    ])
  })
  it('describes one operation with its JSON Schema, defaults included; not_found for an unknown type', async () => {
    allowed.add('system/automate:read')
    const stop = await service.describe(actor, 'stop')
    expect(stop).toMatchObject({
      type: 'stop',
      name: 'Stop',
      category: 'logic',
      schema: {
        type: 'object',
        properties: {
          status: { enum: ['success', 'error'], default: 'success' },
          message: { type: 'string', default: 'Flow execution stopped' },
        },
        additionalProperties: false,
      },
    })
    await expect(service.describe(actor, 'nope')).rejects.toMatchObject({ code: 'not_found' })
  })
  it('also offers the registry', () => {
    expect(service.list()).toHaveLength(createOperationRegistry().list().length)
    expect(typeof service.checkSteps).toBe('function')
  })
})
