export type {
  ExpressionPart,
  ParsedTemplate,
  PathPart,
  PathSegment,
  TagPart,
  TemplatePart,
  TemplateSyntaxError,
  TextPart,
} from './ast.js'
export { parseTemplate, type Parsed } from './parse.js'
export { lookupPath, type UnresolvedReason } from './lookup.js'
export {
  defaultMaxLength,
  renderTemplateText,
  resolveTemplate,
  type ResolveOptions,
  type TemplateResult,
  type Unresolved,
} from './resolve.js'
export {
  assertTemplates,
  checkTemplate,
  checkTemplates,
  resolveTemplates,
  type CheckOptions,
  type TemplateIssue,
  type UnresolvedAt,
} from './deep.js'
export { createTemplateBudget, type TemplateBudget } from './budget.js'
