import { z } from '../../lib/http/index.js'

const fieldExample = { name: 'title', type: 'text', required: true, validationRules: { maxLength: 200 } }

/** A field definition as the server returns it. */
const FieldSchema = z.record(z.string(), z.unknown()).openapi('FieldDef', { example: fieldExample })

/**
 * A field definition as a client sends it: anything here, so that a malformed one (`null`, a string, a
 * list, an unknown property) reaches the service and is 400 `invalid_field` naming its index, not a
 * generic `invalid_request` (definition/field-def-schema.ts checks it).
 */
const FieldInputSchema = z.unknown().openapi('FieldDefInput', {
  type: 'object',
  description: 'A field definition (the properties GET returns); an unknown property is 400 invalid_field',
  example: fieldExample,
})

const indexExample = { fields: ['status', '-views'], unique: false }

/** A compound index as the server returns it (beyond the spec, decision 024). */
const IndexSchema = z
  .object({
    name: z.string().openapi({ description: 'Derived: `<collection>__ix_` and 8 hex digits' }),
    fields: z.array(z.string()).openapi({ description: 'Field names in index order; a leading `-` means descending' }),
    unique: z.boolean(),
  })
  .openapi('CollectionIndex', { example: { name: 'articles__ix_1a2b3c4d', ...indexExample } })

/**
 * The compound indexes as a client sends them: anything here, so that a malformed list reaches the service
 * and is 400 invalid_request naming the index (definition/compound-indexes.ts checks it).
 */
const IndexesInputSchema = z
  .unknown()
  .optional()
  .openapi({
    type: 'array',
    description:
      'Compound indexes (beyond the spec): up to 16 of { fields: 1 to 8 field names (a leading "-" means descending), unique? }. ' +
      'On PATCH the complete list: left out means dropped; absent leaves them as they are. `name` is derived; sent back, it is ignored.',
    example: [indexExample],
  })

export const CollectionSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    name: z.string(),
    storageType: z.string(),
    databaseId: z.string(),
    schemaVersion: z.number().int(),
    fields: z.array(FieldSchema),
    indexes: z.array(IndexSchema),
    accessControl: z
      .object({ preset: z.enum(['private', 'team', 'public']), sharing: z.boolean().optional() })
      .nullable(),
    createdAt: z.number().int(),
    updatedAt: z.number().int(),
  })
  .openapi('Collection')

export const CollectionDetailSchema = CollectionSchema.extend({
  columnStatuses: z.array(z.object({ name: z.string(), exists: z.boolean(), type: z.string() })),
  policyKey: z.string().openapi({ description: 'The resource name permissions on its records use' }),
}).openapi('CollectionDetail')

// Strict: an unknown top-level property is 400 invalid_request naming it, never silently dropped.
export const CreateCollectionSchema = z.strictObject({
  // No length cap here: a name over 50 characters is the service's 400 invalid_name (core-api § Errors),
  // however long it is; the body size limit bounds it.
  name: z.string(),
  storageType: z.string().max(30).optional(),
  databaseId: z.string().max(64).nullable().optional(),
  fields: z.array(FieldInputSchema).max(500),
  indexes: IndexesInputSchema,
  accessControl: z.unknown().optional(),
})

const readOnly = (what: string) =>
  z
    .unknown()
    .optional()
    .openapi({ description: `${what}: read only, accepted and ignored` })
const unchangeable = (what: string) =>
  z
    .string()
    .max(100)
    .optional()
    .openapi({ description: `${what}: may be sent only with its current value (400 invalid_request otherwise)` })

/**
 * Strict like create, but a client may send back the collection as GET returned it: `name`, `storageType`
 * and `databaseId` with their current values (renaming or moving a collection is not supported), and the
 * read-only properties, which are ignored.
 */
export const UpdateCollectionSchema = z.strictObject({
  fields: z.array(FieldInputSchema).max(500).optional().openapi({
    description: 'The complete field list; absent leaves the fields as they are (renames and drop need it)',
  }),
  indexes: IndexesInputSchema,
  accessControl: z.unknown().optional(),
  name: unchangeable('The collection name'),
  storageType: unchangeable('The storage type'),
  databaseId: unchangeable('The database binding'),
  enumChanges: z
    .record(z.string().max(100), z.record(z.string().max(200), z.string().max(200)))
    .optional()
    .openapi({
      description:
        'Per enum or multi_enum field, each value the new enumValues remove → the kept value its records get (rewritten in the same transaction). Without it, removing or renaming a value that records hold is 409 conflict with the count per value.',
      example: { status: { waiting: 'open' } },
    }),
  renames: z
    .record(z.string().max(100), z.string().max(100))
    .optional()
    .openapi({
      description:
        'Existing field → its new name; the field list holds it under the new name. Data is kept; grants, indexes, relations, lookups, rollups and search indexes that name it follow; lenses and flows are reported in meta.renames[].kept (docs/collections.md).',
      example: { title: 'name' },
    }),
  drop: z
    .array(z.string().max(100))
    .max(500)
    .optional()
    .openapi({
      description:
        'Existing fields to drop with their data; the field list leaves them out. A field missing from the list without being named here is 400. Refused (409) while anything names the field.',
      example: ['legacy_code'],
    }),
  id: readOnly('id'),
  projectId: readOnly('projectId'),
  schemaVersion: readOnly('schemaVersion'),
  createdAt: readOnly('createdAt'),
  updatedAt: readOnly('updatedAt'),
  columnStatuses: readOnly('columnStatuses'),
  policyKey: readOnly('policyKey'),
})

export const NameParams = z.object({ name: z.string().min(1).max(100) })

const FieldReferenceSchema = z.object({
  kind: z.enum(['field', 'index', 'grant', 'search_index', 'lens', 'flow', 'renderer', 'view']),
  id: z.string(),
  name: z.string(),
  updatable: z.boolean(),
})

/** Per renamed field, what named it: rewritten by the rename (`updated`) or left as it was (`kept`). */
export const RenameReportSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    updated: z.array(FieldReferenceSchema),
    kept: z.array(FieldReferenceSchema),
  })
  .openapi('FieldRenameReport')

/** What a PATCH with the same body would do (POST /collections/:name/changes/preview); nothing is written. */
export const ChangePreviewSchema = z
  .object({
    accepted: z.boolean(),
    schemaVersion: z.object({ from: z.number().int(), to: z.number().int() }),
    records: z.number().int().openapi({ description: 'Records in the collection, soft-deleted ones too' }),
    changes: z.array(
      z.object({
        kind: z
          .string()
          .openapi({ description: 'added, renamed, dropped, or the kind of change of an existing field' }),
        field: z.string(),
        from: z.string().optional(),
        updated: z.array(FieldReferenceSchema).optional(),
        kept: z.array(FieldReferenceSchema).optional(),
        valuesLost: z.number().int().optional(),
        before: z.record(z.string(), z.unknown()).nullable().optional(),
        after: z.record(z.string(), z.unknown()).optional(),
        rowsRewritten: z.number().int().optional(),
      }),
    ),
    indexesAdded: z.array(z.string()),
    indexesDropped: z.array(z.string()),
    refusal: z
      .object({
        status: z.number().int(),
        error: z.string(),
        message: z.string(),
        details: z.record(z.string(), z.unknown()),
      })
      .nullable()
      .openapi({ description: 'The error the PATCH would answer now (409), or null' }),
  })
  .openapi('CollectionChangePreview')
