import { defineBrickKind } from './define.js'

export const accessKind = defineBrickKind({ kind: 'access', label: 'access rules of a collection', namedBy: null })
