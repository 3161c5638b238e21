import { defineBrickKind } from './define.js'

/** Grants always need the installer's consent (the plan says so); nothing here limits the body yet. */
export const grantsKind = defineBrickKind({ kind: 'grants', label: 'the grants of a role', namedBy: null })
