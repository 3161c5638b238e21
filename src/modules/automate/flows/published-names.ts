/**
 * The names of the flow components the OpenAPI document publishes (published-schemas.ts builds them), shared
 * with schemas.ts, whose response shapes point at them.
 */
const pascal = (type: string) => type.replace(/(?:^|_)([a-z0-9])/g, (_, c: string) => c.toUpperCase())

export const publishedNames = {
  step: 'FlowStep',
  stepOf: (type: string) => `FlowStepOp${pascal(type)}`,
  triggerConfigOf: (type: string) => `FlowTrigger${pascal(type)}`,
  createOf: (type: string) => `FlowCreate${pascal(type)}`,
  documentOf: (type: string) => `FlowDocument${pascal(type)}`,
  patch: 'FlowPatch',
} as const

/** A reference to a component of the document. */
export const componentRef = (name: string) => ({ $ref: `#/components/schemas/${name}` })
