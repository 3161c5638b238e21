import { z } from 'zod'
import { defineTool } from '../types.js'

/** list_flows: the project's automation flows, summarised (needs system/automate:read). */
export const listFlows = defineTool({
  name: 'list_flows',
  description:
    'The automation flows of the project: { flows: [{ id, slug, name, description, status, triggerType, collections, publishedVersion, lastRunAt, runCount, errorCount, system }] }. Needs system/automate:read.',
  inputSchema: z.object({}).strict(),
  async run(principal, _args, services) {
    const flows = await services.flows.list(principal)
    return {
      flows: flows.map((f) => ({
        id: f.id,
        slug: f.slug,
        name: f.name,
        description: f.description,
        status: f.status,
        triggerType: f.triggerType,
        collections: f.collections,
        publishedVersion: f.publishedVersion,
        lastRunAt: f.lastRunAt,
        runCount: f.runCount,
        errorCount: f.errorCount,
        system: f.system,
      })),
    }
  },
})
