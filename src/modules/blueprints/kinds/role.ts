import { defineBrickKind } from './define.js'

export const roleKind = defineBrickKind({ kind: 'role', label: 'a role', namedBy: 'name' })
