import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import { testContext, testServices } from '../test-context.js'
import { buildSearchIndex, type SearchIndexServices } from './build-search-index.js'

function fakeIndexes(build: SearchIndexServices['searchIndexes']['build']) {
  const calls: { principal: Principal; name: string }[] = []
  const services: SearchIndexServices = {
    searchIndexes: {
      build: async (principal, name, signal) => {
        calls.push({ principal, name })
        return build(principal, name, signal)
      },
    },
  }
  return { services: testServices(services), calls }
}

describe('build_search_index: config', () => {
  it('indexName is required text', () => {
    expect(buildSearchIndex.configSchema.safeParse({}).success).toBe(false)
    expect(buildSearchIndex.configSchema.safeParse({ indexName: '' }).success).toBe(false)
    expect(buildSearchIndex.configSchema.parse({ indexName: 'articles' })).toEqual({ indexName: 'articles' })
    expect(buildSearchIndex.configSchema.safeParse({ indexName: 'a', other: 1 }).success).toBe(false)
  })
  it('writes: a dry run does not build', () => {
    expect(buildSearchIndex.effects).toBe('writes')
    expect(buildSearchIndex.category).toBe('data')
  })
})

describe('build_search_index: run', () => {
  it("builds as the run's principal and outputs the index after the build", async () => {
    const { ctx } = testContext()
    const { services, calls } = fakeIndexes(async (_p, name) => ({
      name,
      status: 'ready',
      builtAt: 1_700_000_000,
      documentCount: 3,
      sizeBytes: 4096,
      buildId: 'b1',
    }))
    const out = await buildSearchIndex.run({ indexName: 'articles' }, { ...ctx, services })
    expect(out).toEqual({
      indexName: 'articles',
      status: 'ready',
      builtAt: 1_700_000_000,
      documentCount: 3,
      sizeBytes: 4096,
      buildId: 'b1',
    })
    expect(calls).toEqual([{ principal: ctx.principal, name: 'articles' }])
  })
  it('a refusal is a typed step error with the API code and status', async () => {
    const { ctx } = testContext()
    const { services } = fakeIndexes(async () => {
      throw new AppError('not_found', 'Search index "nope" not found')
    })
    await expect(buildSearchIndex.run({ indexName: 'nope' }, { ...ctx, services })).rejects.toMatchObject({
      code: 'not_found',
      statusCode: 404,
      retryable: false,
    })
  })
})
