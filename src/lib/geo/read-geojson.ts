import { AppError } from '../errors.js'
import { capped, isObject, numbered, type GeoFeature, type GeoFeatures } from './features.js'

/**
 * A GeoJSON body (RFC 7946): a FeatureCollection or one Feature. Each feature's geometry (or null) and
 * properties (null is none); an entry of `features` that is not a Feature is that feature's problem.
 * Throws invalid_request when the body is not JSON, or neither a FeatureCollection nor a Feature.
 */
export function readGeoJson(body: string, limit: number): GeoFeatures {
  let value: unknown
  try {
    value = JSON.parse(body.charCodeAt(0) === 0xfeff ? body.slice(1) : body)
  } catch {
    throw new AppError('invalid_request', 'The body is not valid JSON (GeoJSON expected)')
  }
  let list: readonly unknown[]
  if (isObject(value) && value.type === 'FeatureCollection') {
    if (!Array.isArray(value.features))
      throw new AppError('invalid_request', 'A FeatureCollection needs a "features" array')
    list = value.features
  } else if (isObject(value) && value.type === 'Feature') {
    list = [value]
  } else {
    throw new AppError(
      'invalid_request',
      'Send a GeoJSON FeatureCollection or Feature (a bare geometry has no properties: wrap it in a Feature)',
    )
  }
  const { items, truncated } = capped(list, limit)
  return { features: items.map(featureOf), truncated, textValues: false }
}

function featureOf(entry: unknown, index: number): GeoFeature {
  if (!isObject(entry) || entry.type !== 'Feature')
    return numbered(index, null, {}, { message: 'This entry of "features" is not a GeoJSON Feature', geometry: false })
  const { geometry, properties } = entry
  if (properties !== null && properties !== undefined && !isObject(properties))
    return numbered(index, null, {}, { message: 'The feature\'s "properties" is not an object', geometry: false })
  return numbered(index, geometry ?? null, properties ?? {})
}
