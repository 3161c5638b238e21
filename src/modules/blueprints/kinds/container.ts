import { defineBrickKind } from './define.js'

export const containerKind = defineBrickKind({ kind: 'container', label: 'a file container', namedBy: 'name' })
