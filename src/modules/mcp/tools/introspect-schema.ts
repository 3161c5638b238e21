import { z } from 'zod'
import { viewOf, visibleCollection } from '../collection-view.js'
import { defineTool } from '../types.js'

/** introspect_schema: one collection's field definitions, the ones the key may read. */
export const introspectSchema = defineTool({
  name: 'introspect_schema',
  description:
    'The definition of one collection: { name, storageType, schemaVersion, fields: [{ name, type, required, … }], indexes }. Fields the key may not read are left out.',
  inputSchema: z.object({ collection: z.string().min(1).max(100).describe('Collection name') }).strict(),
  async run(principal, args, services) {
    return viewOf(principal, await visibleCollection(principal, args.collection, services), services)
  },
})
