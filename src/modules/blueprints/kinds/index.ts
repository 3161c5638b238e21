import { accessKind } from './access.js'
import { attachmentKind } from './attachment.js'
import { collectionKind } from './collection.js'
import { containerKind } from './container.js'
import type { BrickKind, BrickKindName } from './define.js'
import { flowKind } from './flow.js'
import { grantsKind } from './grants.js'
import { lensKind } from './lens.js'
import { navKind } from './nav.js'
import { recordsKind } from './records.js'
import { rendererKind } from './renderer.js'
import { roleKind } from './role.js'
import { scriptKind } from './script.js'
import { searchIndexKind } from './search-index.js'
import { viewKind } from './view.js'
import { webhookKind } from './webhook.js'

export { brickKindNames, type BrickKind, type BrickKindName, type StaticCheckContext } from './define.js'

/** Every brick kind, one file each, in the spec's order (a test holds it to the spec's list). */
export const brickKinds: readonly BrickKind[] = [
  collectionKind,
  accessKind,
  grantsKind,
  roleKind,
  recordsKind,
  flowKind,
  scriptKind,
  lensKind,
  attachmentKind,
  rendererKind,
  viewKind,
  navKind,
  webhookKind,
  searchIndexKind,
  containerKind,
]

const byName = new Map<string, BrickKind>(brickKinds.map((k) => [k.kind, k]))

/** The kind of that name, or undefined for a kind that does not exist. */
export function brickKindOf(kind: string): BrickKind | undefined {
  return byName.get(kind)
}

export function isBrickKindName(kind: string): kind is BrickKindName {
  return byName.has(kind)
}
