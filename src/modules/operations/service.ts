import { AppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import { configJsonSchema, formFields, type FormField, type JsonSchema } from './describe.js'
import type { OperationCategory, OperationDefinition, OperationRegistry } from './types.js'

/** An operation as the catalog list shows it. */
export interface CatalogEntry {
  readonly type: string
  readonly name: string
  readonly category: OperationCategory
  readonly description: string
  readonly system: boolean
  readonly fields: FormField[]
}

/** An operation as its own catalog page shows it: the full config schema. */
export interface OperationDescription {
  readonly type: string
  readonly name: string
  readonly category: OperationCategory
  readonly description: string
  readonly system: boolean
  readonly schema: JsonSchema
}

/** The registry (for flows and runs, no permission involved) plus the catalog reads, which check the caller. */
export interface OperationsService extends OperationRegistry {
  /** Every operation with its form fields. Throws unauthorized / forbidden without system/automate:read. */
  catalog(actor: Principal): Promise<CatalogEntry[]>
  /** One operation with its config's JSON Schema. Throws unauthorized / forbidden without system/automate:read, not_found for an unknown type. */
  describe(actor: Principal, type: string): Promise<OperationDescription>
}

export interface OperationsServiceDeps {
  readonly access: Pick<AccessService, 'authorize'>
  readonly registry: OperationRegistry
}

/** The catalog over a registry; what it describes is computed once per operation (definitions never change). */
export function createOperationsService(deps: OperationsServiceDeps): OperationsService {
  const { registry, access } = deps
  const schemas = new Map<string, JsonSchema>()
  const entries = new Map<string, CatalogEntry>()
  const schemaOf = (definition: OperationDefinition): JsonSchema => {
    let schema = schemas.get(definition.type)
    if (!schema) schemas.set(definition.type, (schema = configJsonSchema(definition)))
    return schema
  }
  const entryOf = (definition: OperationDefinition): CatalogEntry => {
    let entry = entries.get(definition.type)
    if (!entry)
      entries.set(
        definition.type,
        (entry = Object.freeze({ ...summary(definition), fields: formFields(definition, schemaOf(definition)) })),
      )
    return entry
  }
  return Object.freeze({
    ...registry,
    async catalog(actor: Principal) {
      await access.authorize(actor, 'system/automate:read')
      return registry.list().map(entryOf)
    },
    async describe(actor: Principal, type: string) {
      await access.authorize(actor, 'system/automate:read')
      const definition = registry.get(type)
      if (!definition) throw new AppError('not_found', `Unknown operation type '${type}'`)
      return { ...summary(definition), schema: schemaOf(definition) }
    },
  })
}

function summary(definition: OperationDefinition) {
  return {
    type: definition.type,
    name: definition.label,
    category: definition.category,
    description: definition.description,
    system: definition.system === true,
  }
}
