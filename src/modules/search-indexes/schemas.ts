import { z } from '../../lib/http/index.js'

/** The wire shapes of /api/v1/search-indexes (decision 042); they feed validation and the OpenAPI document. */

export const searchIndexLimits = {
  sources: 10,
  fieldsPerSource: 20,
  /** Documents (records) one build takes in at most; a build over it fails. */
  documents: 250_000,
  /** Hits one query answers at most. */
  queryLimit: 100,
  queryLength: 500,
} as const

export const indexStatuses = ['stale', 'building', 'ready', 'failed'] as const

const namePattern = /^[a-z0-9_-]{1,100}$/
export const IndexName = z.string().regex(namePattern, 'must be 1-100 lower-case letters, digits, _ or -')

const fieldName = z.string().min(1).max(100)

export const SourceSchema = z
  .strictObject({
    collection: z.string().min(1).max(100),
    fields: z
      .array(fieldName)
      .min(1, 'needs at least one field')
      .max(searchIndexLimits.fieldsPerSource)
      .refine((list) => new Set(list).size === list.length, 'lists a field twice'),
  })
  .openapi('SearchIndexSource', { description: 'A collection and the fields of it the index holds' })

const sources = z
  .array(SourceSchema)
  .min(1, 'needs at least one source')
  .max(searchIndexLimits.sources)
  .refine((list) => new Set(list.map((s) => s.collection)).size === list.length, 'names a collection twice')

export const SearchIndexSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    sources: z.array(SourceSchema),
    status: z.enum(indexStatuses).openapi({
      description:
        'stale: the built file (if any) predates a change to a source; building; ready; failed: the last build failed (see error)',
    }),
    builtAt: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'Unix seconds of the build queries read; null when never built' }),
    documentCount: z.number().int().openapi({ description: 'Records the built file holds' }),
    sizeBytes: z.number().int(),
    buildId: z.string().nullable(),
    error: z.string().nullable().openapi({ description: 'Why the last build failed' }),
    createdAt: z.number().int(),
    updatedAt: z.number().int(),
  })
  .openapi('SearchIndex', {
    description: 'A full-text index over fields of collections, compiled into an SQLite FTS5 file in object storage',
  })

export const CreateSearchIndexSchema = z.strictObject({
  name: IndexName,
  description: z.string().max(1000).default(''),
  sources,
})

export const UpdateSearchIndexSchema = z.strictObject({
  description: z.string().max(1000).optional(),
  sources: sources.optional(),
})

export const SearchHitSchema = z
  .object({
    collection: z.string(),
    id: z.string(),
    score: z.number().openapi({ description: 'bm25 relevance, higher is better' }),
    field: z.string().nullable().openapi({ description: 'The field the snippet comes from' }),
    snippet: z.string().openapi({ description: 'HTML-escaped text around the match, matched terms in <mark>…</mark>' }),
  })
  .openapi('SearchHit')

export type SearchIndexSource = z.infer<typeof SourceSchema>
export type SearchIndex = z.infer<typeof SearchIndexSchema>
export type CreateSearchIndexInput = z.infer<typeof CreateSearchIndexSchema>
export type UpdateSearchIndexInput = z.infer<typeof UpdateSearchIndexSchema>
export type SearchHit = z.infer<typeof SearchHitSchema>
