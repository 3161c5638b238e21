import { defineBrickKind } from './define.js'

export const viewKind = defineBrickKind({ kind: 'view', label: 'a saved view', namedBy: null })
