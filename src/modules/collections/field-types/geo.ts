import { decodeJson } from './decode.js'
import { defineFieldType } from './define-field-type.js'
import { invalidValue } from './field-value-error.js'
import { geometryProblem } from './geojson.js'
import { jsonColumn } from './text-like.js'

/** A GeoJSON geometry (not a Feature), stored as JSON. */
export const geoField = defineFieldType({
  type: 'geo',
  label: 'Location',
  column: (_def, dialect) => jsonColumn(dialect),
  valueKind: () => 'json',
  write(value, def) {
    const problem = geometryProblem(value)
    if (problem) throw invalidValue(def.name, `a GeoJSON geometry (${problem})`, value)
    return value
  },
  read: (value, _def, dialect) => decodeJson(value, dialect),
})
