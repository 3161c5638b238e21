import { defineBrickKind } from './define.js'

export const rendererKind = defineBrickKind({ kind: 'renderer', label: 'a renderer', namedBy: null })
