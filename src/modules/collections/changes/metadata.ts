import { defineChange } from './define-change.js'

/**
 * Changes that touch no row. `indexed` and a json field's `structure` were the only changes before (the
 * table change makes or drops the index; the structure hooks check the rows); a label is a name for people.
 */
export const indexedChange = defineChange({ kind: 'indexed', properties: ['indexed'] })
export const structureChange = defineChange({ kind: 'structure', properties: ['structure'] })
export const labelChange = defineChange({ kind: 'label', properties: ['label'] })
