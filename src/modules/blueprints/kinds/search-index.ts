import { defineBrickKind } from './define.js'

export const searchIndexKind = defineBrickKind({ kind: 'search-index', label: 'a search index', namedBy: 'name' })
