import { defineBrickKind } from './define.js'

export const lensKind = defineBrickKind({ kind: 'lens', label: 'a lens', namedBy: null })
