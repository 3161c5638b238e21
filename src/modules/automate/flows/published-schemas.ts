import type { OpenAPIHono } from '@hono/zod-openapi'
import { z } from 'zod'
import type { AppEnv } from '../../../lib/http/index.js'
import type { OperationDefinition } from '../../operations/index.js'
import { StepSchema } from '../model.js'
import { triggerDefinitions } from '../triggers/registry.js'
import { componentRef, publishedNames } from './published-names.js'
import { CreateFlowSchema, FlowDocumentSchema, PatchFlowSchema } from './schemas.js'

/**
 * What the OpenAPI document says of a flow body, and nothing else: the trigger config as a union discriminated
 * by `triggerType`, each step as a union discriminated by its operation `type`, both derived from the registries'
 * config schemas (so a typed client can write a flow). Validation does not read any of this: a flow body is
 * still checked by the service (422 validation_error naming the path), and the routes' own schemas stay
 * `record` in what they accept. The shapes are components registered on the flows router; the routes' body
 * schemas point at them through `.openapi()` metadata, which replaces the generated schema.
 */

type Json = Record<string, unknown>

const ref = componentRef

/** A zod schema as a client writes it (input side), without the `$schema` key a component may not carry. */
export function jsonOf(schema: z.ZodType): Json {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json
  return rest
}

function propertiesOf(schema: Json): Json {
  return (schema.properties ?? {}) as Json
}

function stepMember(definition: OperationDefinition, step: Json): Json {
  const config = jsonOf(definition.configSchema)
  // A config with a required field is itself required (the step's own default {} would fail the check).
  const configRequired = Array.isArray(config.required) && config.required.length > 0
  const required = [...((step.required as string[] | undefined) ?? []), ...(configRequired ? ['config'] : [])]
  return {
    ...step,
    ...(definition.system
      ? { description: `${definition.label} (system-managed flows only)` }
      : { description: definition.label }),
    properties: { ...propertiesOf(step), type: { type: 'string', const: definition.type }, config },
    required: [...new Set(required)],
  }
}

/** Builds the components: a step per operation, and per trigger its config, a create body and a portable document; the patch body. */
export function publishedFlowComponents(operations: readonly OperationDefinition[]): Record<string, Json> {
  const components: Record<string, Json> = {}
  const step = jsonOf(StepSchema)
  for (const definition of operations) components[publishedNames.stepOf(definition.type)] = stepMember(definition, step)
  components[publishedNames.step] = {
    description: "One step of a flow: its config is the operation's (docs/operations.md), chosen by `type`",
    oneOf: operations.map((definition) => ref(publishedNames.stepOf(definition.type))),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(
        operations.map((d) => [d.type, `#/components/schemas/${publishedNames.stepOf(d.type)}`]),
      ),
    },
  }
  const steps = { type: 'array', maxItems: 500, items: ref(publishedNames.step) }
  const create = jsonOf(CreateFlowSchema)
  const document = jsonOf(FlowDocumentSchema)
  for (const trigger of triggerDefinitions) {
    components[publishedNames.triggerConfigOf(trigger.type)] = {
      ...jsonOf(trigger.configSchema),
      description: `The config of a ${trigger.label} trigger (triggerType ${trigger.type})`,
    }
    components[publishedNames.createOf(trigger.type)] = {
      ...create,
      properties: {
        ...propertiesOf(create),
        triggerType: { type: 'string', const: trigger.type },
        triggerConfig: ref(publishedNames.triggerConfigOf(trigger.type)),
        operations: steps,
      },
    }
    components[publishedNames.documentOf(trigger.type)] = {
      ...document,
      properties: {
        ...propertiesOf(document),
        triggerType: { type: 'string', const: trigger.type },
        triggerConfig: ref(publishedNames.triggerConfigOf(trigger.type)),
        operations: steps,
      },
    }
  }
  const patch = jsonOf(PatchFlowSchema)
  components[publishedNames.patch] = {
    ...patch,
    properties: {
      ...propertiesOf(patch),
      // The stored trigger type applies when a patch sends no triggerType: any trigger's config may come.
      triggerConfig: { anyOf: triggerDefinitions.map((t) => ref(publishedNames.triggerConfigOf(t.type))) },
      operations: steps,
    },
  }
  return components
}

/** One member per trigger type, discriminated by `triggerType`: the create body, or the portable document. */
function byTrigger(nameOf: (type: string) => string): Json {
  return {
    type: 'object',
    oneOf: triggerDefinitions.map((t) => ref(nameOf(t.type))),
    discriminator: {
      propertyName: 'triggerType',
      mapping: Object.fromEntries(triggerDefinitions.map((t) => [t.type, `#/components/schemas/${nameOf(t.type)}`])),
    },
  }
}

/** The published create body (POST /flows). */
export const publishedCreateBody = (): Json => byTrigger(publishedNames.createOf)
/** The published flow document (GET /flows/:id/export answers it, POST /flows/import takes it). */
export const publishedDocument = (): Json => byTrigger(publishedNames.documentOf)

/** The published patch body: a reference to its component. */
export const publishedPatchBody: Json = { type: 'object', allOf: [ref(publishedNames.patch)] }

/** Registers the components on the flows router (merged into the app's document when it is mounted). */
export function registerPublishedFlowSchemas(
  router: OpenAPIHono<AppEnv>,
  operations: readonly OperationDefinition[],
): void {
  for (const [name, schema] of Object.entries(publishedFlowComponents(operations)))
    router.openAPIRegistry.registerComponent('schemas', name, schema)
}
