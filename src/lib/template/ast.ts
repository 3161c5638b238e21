/**
 * A parsed template: frozen parts with a `kind`. The parser makes them; the resolver and the save-time
 * check read them. A template is text with `{{ path }}` and `{{= expression }}` tags (docs/templates.md).
 */

/** Literal text, escapes already undone (`\{{` became `{{`). */
export interface TextPart {
  readonly kind: 'text'
  readonly text: string
}

/** `.name`, `["quoted name"]` and `.0` are keys (`.0` reads an array's index 0 too); `[0]` is an index. */
export type PathSegment =
  | { readonly kind: 'key'; readonly key: string }
  | { readonly kind: 'index'; readonly index: number }

/** `{{ root.a[0].b }}`: a root in the context, then keys and indexes. */
export interface PathPart {
  readonly kind: 'path'
  /** The tag as written, braces included, for messages. */
  readonly source: string
  /** Offset of the tag's `{{` in the template string. */
  readonly position: number
  readonly root: string
  readonly segments: readonly PathSegment[]
}

/** `{{= code }}`: handed to the caller's evaluator (the spec's JSONata); the template never evaluates it. */
export interface ExpressionPart {
  readonly kind: 'expression'
  readonly source: string
  readonly position: number
  /** What follows the `=`, trimmed. */
  readonly code: string
}

export type TagPart = PathPart | ExpressionPart
export type TemplatePart = TextPart | TagPart

export interface ParsedTemplate {
  readonly parts: readonly TemplatePart[]
  /** The one tag when the string is exactly that tag (no text around it, not even a space): its value keeps its type. */
  readonly whole: TagPart | null
}

/** Why a template does not parse; `position` is the 0-based offset in the string of what is wrong. */
export interface TemplateSyntaxError {
  readonly code: 'unclosed_tag' | 'empty_tag' | 'empty_expression' | 'invalid_path' | 'forbidden_key' | 'unknown_root'
  readonly message: string
  readonly position: number
}
