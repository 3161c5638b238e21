import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { operationCatalog } from './catalog/index.js'
import { exampleOf, renderOperationsPage } from './docs-page.js'
import { createOperationRegistry } from './registry.js'
import { defineOperation } from './types.js'
import { z } from 'zod'

const pagePath = fileURLToPath(new URL('../../../docs/operations.md', import.meta.url))

describe('docs/operations.md', () => {
  it('is what the registry renders (run `npm run docs:operations` after changing an operation)', () => {
    const committed = readFileSync(pagePath, 'utf8')
    // One assertion on the whole page: the diff shows what changed.
    expect(committed, 'docs/operations.md is stale: run npm run docs:operations').toBe(
      renderOperationsPage(operationCatalog),
    )
  })
  it('has one section per registered operation, with its config table and an example', () => {
    const page = renderOperationsPage(operationCatalog)
    for (const definition of operationCatalog) {
      const start = page.indexOf(`\n### ${definition.type}\n`)
      expect(start, definition.type).toBeGreaterThan(0)
      const next = page.indexOf('\n### ', start + 1)
      const section = page.slice(start, next === -1 ? undefined : next)
      expect(section, definition.type).toMatch(
        /\| Field \| Type \| Required \| Default \| Bounds or values \| Description \||No configuration\./,
      )
      expect(section, definition.type).toContain(`"type": "${definition.type}"`)
    }
  })
  it('every example given (own or fallback) passes the save-time check of a flow', () => {
    const registry = createOperationRegistry()
    for (const definition of operationCatalog) {
      const { config, derived } = exampleOf(definition)
      if (derived) continue
      expect(
        () => registry.checkSteps([{ key: 'example', type: definition.type, config }]),
        definition.type,
      ).not.toThrow()
    }
  })
  it('would be caught stale: a changed bound changes the page', () => {
    const delay = operationCatalog.find((d) => d.type === 'delay')!
    const changed = defineOperation({
      ...delay,
      configSchema: z.strictObject({ ms: z.number().int().min(0).max(30_000).default(1000) }),
    })
    const before = renderOperationsPage(operationCatalog)
    const after = renderOperationsPage(operationCatalog.map((d) => (d === delay ? changed : d)))
    expect(after).not.toBe(before)
    expect(after).toContain('0-30000')
  })
  it('derives an example from the required fields of an operation without one', () => {
    const bare = defineOperation({
      type: 'bare_op',
      category: 'logic',
      label: 'Bare',
      description: 'x',
      effects: 'none',
      configSchema: z.strictObject({
        name: z.string(),
        mode: z.enum(['a', 'b']),
        n: z.number().int().min(3),
        extra: z.string().optional(),
      }),
      async run() {
        return null
      },
    })
    expect(exampleOf(bare)).toEqual({ config: { name: '<name>', mode: 'a', n: 3 }, derived: true })
  })
})
