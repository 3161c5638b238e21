import type { DiagnosticCode } from '../document/diagnostics.js'
import type { ParamDecl } from '../document/params.js'

/** The fifteen brick kinds (§ Blueprint document), in the spec's order. */
export const brickKindNames = [
  'collection',
  'access',
  'grants',
  'role',
  'records',
  'flow',
  'script',
  'lens',
  'attachment',
  'renderer',
  'view',
  'nav',
  'webhook',
  'search-index',
  'container',
] as const

export type BrickKindName = (typeof brickKindNames)[number]

/** The BLOCKED reasons a static check can already tell from a brick's body alone. */
export type StaticBlockedReason = 'brick.late_bound_lens'

/** What a kind's static check may say about one brick's body. */
export interface StaticCheckContext {
  readonly brickId: string | null
  /** The line of the brick's opening fence. */
  readonly line: number
  /** The declared parameters (empty when the envelope could not be read). */
  readonly params: readonly ParamDecl[]
  /** The brick is refused: the document fails validation. */
  error(code: DiagnosticCode, message: string): void
  /** The plan will block the brick for this reason; validate shows it as a warning. */
  blocked(reason: StaticBlockedReason, message: string): void
}

/**
 * One brick kind. Today: the body field naming what it creates (rule 1's naming check) and the limits a
 * body alone decides. Compile, read, plan and apply join here as the install work lands (issue 30).
 */
export interface BrickKind {
  readonly kind: BrickKindName
  /** What a brick of this kind installs, in a few words (for messages and the docs). */
  readonly label: string
  /** The body field holding the created name (or nav label) that must embed the namespace; null: not checked. */
  readonly namedBy: 'name' | 'label' | null
  /** Limits that depend only on the body (never on the live project). */
  staticCheck?(body: Readonly<Record<string, unknown>>, ctx: StaticCheckContext): void
}

export function defineBrickKind<K extends BrickKind>(kind: K): K {
  return Object.freeze(kind)
}
