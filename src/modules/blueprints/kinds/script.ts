import { defineBrickKind } from './define.js'

export const scriptKind = defineBrickKind({ kind: 'script', label: 'a saved script', namedBy: 'name' })
