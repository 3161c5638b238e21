import { defineBrickKind } from './define.js'

export const flowKind = defineBrickKind({ kind: 'flow', label: 'an automation flow', namedBy: null })
