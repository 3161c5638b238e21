import { z } from 'zod'
import { MASK, maskSteps, maskTriggerConfig } from '../../automate/index.js'
import { defineTool } from '../types.js'

/** get_flow_definition: one flow's trigger and steps, credentials always masked (needs system/automate:read). */
export const getFlowDefinition = defineTool({
  name: 'get_flow_definition',
  description:
    'One automation flow: its trigger (type and config), draft steps (operations), published steps, options and status. Credentials (secrets, tokens, credential headers such as Authorization, Cookie or X-Api-Key, the webhook token) are always masked. Needs system/automate:read.',
  inputSchema: z.object({ flowId: z.string().min(1).max(64).describe('The flow id (from list_flows)') }).strict(),
  async run(principal, args, services) {
    const flow = await services.flows.get(principal, args.flowId)
    // Masked for every key, even one whose creator could see them: a tool's answer goes to a model.
    return {
      ...flow,
      triggerConfig: maskTriggerConfig(flow.triggerType, flow.triggerConfig),
      operations: maskSteps(flow.operations),
      publishedOperations: flow.publishedOperations === null ? null : maskSteps(flow.publishedOperations),
      webhookEndpoint:
        flow.webhookEndpoint === null
          ? null
          : {
              methods: flow.webhookEndpoint.methods,
              url: flow.webhookEndpoint.url.replace(flow.webhookEndpoint.token, MASK),
              token: MASK,
            },
    }
  },
})
