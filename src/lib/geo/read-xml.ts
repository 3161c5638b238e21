import { gpx, kml } from '@tmcw/togeojson'
import { DOMParser } from '@xmldom/xmldom'
import { AppError } from '../errors.js'
import { capped, isObject, numbered, type GeoFeatures } from './features.js'

/**
 * Any report of the XML parser (warning, error, fatal error) stops it: a malformed document is refused
 * whole, never read as the part before the fault. xmldom loads no DTD and resolves no external entity (an
 * entity it does not know is such a report), so a body cannot make the server read a file or a URL.
 */
const parser = new DOMParser({
  onError(level: string, message: string) {
    throw new Error(`${level}: ${message}`)
  },
})

function parseXml(body: string, format: string): Parameters<typeof kml>[0] {
  let doc
  try {
    // A UTF-8 byte order mark (common in exported files) is not content before the root element.
    doc = parser.parseFromString(body.charCodeAt(0) === 0xfeff ? body.slice(1) : body, 'text/xml')
  } catch (err) {
    const reason = err instanceof Error ? err.message.replace(/^Reporting \w+ "(.*)" caused .*$/s, '$1') : String(err)
    throw new AppError(
      'invalid_request',
      `The body is not well-formed XML (${format} expected): ${reason.slice(0, 300)}`,
    )
  }
  return doc
}

/** A KML body: each placemark a feature (togeojson: points, lines, polygons, multi-geometries). Throws invalid_request. */
export function readKml(body: string, limit: number): GeoFeatures {
  const doc = parseXml(body, 'KML')
  if (doc.documentElement?.localName !== 'kml')
    throw new AppError('invalid_request', 'The body is XML but not KML (its root element is not <kml>)')
  return featuresOf(kml(doc).features, limit)
}

/** A GPX body: each waypoint, track and route a feature (togeojson's order: tracks, routes, waypoints). Throws invalid_request. */
export function readGpx(body: string, limit: number): GeoFeatures {
  const doc = parseXml(body, 'GPX')
  if (doc.documentElement?.localName !== 'gpx')
    throw new AppError('invalid_request', 'The body is XML but not GPX (its root element is not <gpx>)')
  return featuresOf(gpx(doc).features, limit)
}

function featuresOf(list: readonly { geometry: unknown; properties: unknown }[], limit: number): GeoFeatures {
  const { items, truncated } = capped(list, limit)
  return {
    features: items.map((f, i) => numbered(i, f.geometry ?? null, isObject(f.properties) ? f.properties : {})),
    truncated,
    textValues: true,
  }
}
