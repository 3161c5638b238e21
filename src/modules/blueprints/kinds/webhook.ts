import { defineBrickKind } from './define.js'

export const webhookKind = defineBrickKind({ kind: 'webhook', label: 'a collection webhook', namedBy: 'name' })
