import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { readCsv, readGeoJson, readGpx, readKml } from './index.js'

// The geospatial readers: what each makes of well-formed bodies, and a table of hostile or malformed ones
// that must be refused whole (invalid_request or validation_error) or per feature (problem).

const refused = (read: () => unknown): string => {
  try {
    read()
  } catch (err) {
    if (err instanceof AppError) return err.code
    throw err
  }
  return 'accepted'
}

describe('readCsv', () => {
  const rows: [string, string, Parameters<typeof readCsv>[2], unknown][] = [
    [
      'WKT by the default column name, any case',
      'Name,WKT\na,POINT (1 2)\n',
      {},
      [{ line: 2, geometry: { type: 'Point', coordinates: [1, 2] }, properties: { Name: 'a' } }],
    ],
    [
      'geometry is a default WKT name too',
      'geometry;n\nPOINT (1 2);x\n',
      {},
      [{ line: 2, geometry: { type: 'Point', coordinates: [1, 2] }, properties: { n: 'x' } }],
    ],
    [
      'lat/lon defaults: latitude and lng',
      'latitude\tlng\tn\n1.5\t-2\tx\n',
      {},
      [{ line: 2, geometry: { type: 'Point', coordinates: [-2, 1.5] }, properties: { n: 'x' } }],
    ],
    [
      'header names are trimmed, values kept',
      'n, lat, lon\n x ,1,2\n',
      {},
      [{ line: 2, geometry: { type: 'Point', coordinates: [2, 1] }, properties: { n: ' x ' } }],
    ],
    [
      'a named column matches the trimmed header',
      'n, y , x\np,3,4\n',
      { lat: 'y', lon: 'x' },
      [{ line: 2, geometry: { type: 'Point', coordinates: [4, 3] }, properties: { n: 'p' } }],
    ],
    [
      'named columns',
      'n|y|x\np|3|4\n',
      { lat: 'y', lon: 'x', delimiter: '|' },
      [{ line: 2, geometry: { type: 'Point', coordinates: [4, 3] }, properties: { n: 'p' } }],
    ],
    [
      'a quoted cell spanning lines: line is where the row ends',
      'wkt,n\n"POINT (1 2)","two\nlines"\nPOINT (3 4),x\n',
      {},
      [
        { line: 3, geometry: { type: 'Point', coordinates: [1, 2] }, properties: { n: 'two\nlines' } },
        { line: 4, geometry: { type: 'Point', coordinates: [3, 4] }, properties: { n: 'x' } },
      ],
    ],
    [
      'a BOM and CRLF',
      '\ufeffwkt,n\r\nPOINT (1 2),x\r\n',
      {},
      [{ line: 2, geometry: { type: 'Point', coordinates: [1, 2] }, properties: { n: 'x' } }],
    ],
    [
      'empty geometry cells: no geometry',
      'lat,lon,n\n,,x\n',
      {},
      [{ line: 2, geometry: null, properties: { n: 'x' } }],
    ],
    [
      'not WKT: a geometry problem',
      'wkt\nCIRCLE (1 2)\n',
      {},
      [{ line: 2, geometry: null, properties: {}, problem: { message: '"wkt" is not WKT', geometry: true } }],
    ],
    [
      'one coordinate missing: a geometry problem',
      'lat,lon\n1,\n',
      {},
      [{ line: 2, geometry: null, properties: {}, problem: { message: '"lon" is not a number', geometry: true } }],
    ],
    [
      'Infinity is not a number',
      'lat,lon\nInfinity,1\n',
      {},
      [{ line: 2, geometry: null, properties: {}, problem: { message: '"lat" is not a number', geometry: true } }],
    ],
    [
      'too few values: a row problem',
      'wkt,n\nPOINT (1 2)\n',
      {},
      [
        {
          line: 2,
          geometry: null,
          properties: {},
          problem: { message: 'The row has 1 values, the header 2', geometry: false },
        },
      ],
    ],
  ]
  for (const [name, body, options, features] of rows) {
    it(name, () => expect(readCsv(body, 10, options).features).toEqual(features))
  }

  it('reads at most `limit` rows', () => {
    expect(readCsv('wkt\nPOINT (1 1)\nPOINT (2 2)\nPOINT (3 3)\n', 2, {})).toMatchObject({
      truncated: true,
      features: [{ line: 2 }, { line: 3 }],
    })
    expect(readCsv('wkt\nPOINT (1 1)\nPOINT (2 2)\n', 2, {})).toMatchObject({ truncated: false, textValues: true })
  })

  const hostile: [string, string, Parameters<typeof readCsv>[2], string][] = [
    ['an unclosed quote', 'wkt,n\n"POINT (1 2),x\n', {}, 'invalid_request'],
    ['an empty body', '', {}, 'invalid_request'],
    ['a column named twice', 'wkt,n,n\nPOINT (1 2),a,b\n', {}, 'invalid_request'],
    ['wkt with lat', 'wkt\nPOINT (1 2)\n', { wkt: 'wkt', lat: 'y' }, 'invalid_request'],
    ['no geometry column', 'a,b\n1,2\n', {}, 'validation_error'],
    ['lat without a lon column', 'lat,b\n1,2\n', {}, 'validation_error'],
    ['a named column missing', 'wkt\nPOINT (1 2)\n', { wkt: 'shape' }, 'validation_error'],
  ]
  for (const [name, body, options, code] of hostile) {
    it(`refuses ${name}`, () => expect(refused(() => readCsv(body, 10, options))).toBe(code))
  }
})

describe('readGeoJson', () => {
  it('a FeatureCollection: one feature per entry, numbered; null properties are none', () => {
    const body = JSON.stringify({
      type: 'FeatureCollection',
      features: [
        { type: 'Feature', geometry: { type: 'Point', coordinates: [1, 2] }, properties: null },
        { type: 'Feature', geometry: null, properties: { a: 1 } },
        { type: 'Feature', geometry: { type: 'Point', coordinates: [1, 2] }, properties: [1] },
        'nope',
      ],
    })
    expect(readGeoJson(body, 10)).toEqual({
      truncated: false,
      textValues: false,
      features: [
        { line: 1, feature: 0, geometry: { type: 'Point', coordinates: [1, 2] }, properties: {} },
        { line: 2, feature: 1, geometry: null, properties: { a: 1 } },
        {
          line: 3,
          feature: 2,
          geometry: null,
          properties: {},
          problem: { message: 'The feature\'s "properties" is not an object', geometry: false },
        },
        {
          line: 4,
          feature: 3,
          geometry: null,
          properties: {},
          problem: { message: 'This entry of "features" is not a GeoJSON Feature', geometry: false },
        },
      ],
    })
  })

  const hostile: [string, string][] = [
    ['not JSON', '{"type":'],
    ['a bare geometry', '{"type":"Point","coordinates":[1,2]}'],
    ['an array', '[]'],
    ['features not an array', '{"type":"FeatureCollection","features":{}}'],
  ]
  for (const [name, body] of hostile)
    it(`refuses ${name}`, () => expect(refused(() => readGeoJson(body, 10))).toBe('invalid_request'))
})

describe('readKml and readGpx', () => {
  const kml =
    '<kml xmlns="http://www.opengis.net/kml/2.2"><Placemark><name>a</name><Point><coordinates>1,2</coordinates></Point></Placemark></kml>'

  it('KML placemarks and GPX waypoints as features; a byte order mark is accepted', () => {
    expect(readKml(`\ufeff${kml}`, 10).features).toEqual([
      { line: 1, feature: 0, geometry: { type: 'Point', coordinates: [1, 2] }, properties: { name: 'a' } },
    ])
    const gpx =
      '<gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"><wpt lat="2" lon="1"><name>w</name></wpt></gpx>'
    expect(readGpx(gpx, 10).features).toEqual([
      { line: 1, feature: 0, geometry: { type: 'Point', coordinates: [1, 2] }, properties: { name: 'w' } },
    ])
  })

  const hostile: [string, (body: string) => unknown, string][] = [
    ['an unclosed element', (b) => readKml(b, 10), '<kml><Placemark><name>a</name>'],
    ['mismatched tags', (b) => readKml(b, 10), '<kml><Placemark></kml></Placemark>'],
    ['content after the root', (b) => readKml(b, 10), `${kml}<kml/>`],
    ['not XML at all', (b) => readKml(b, 10), '{"type":"Feature"}'],
    [
      'an external entity',
      (b) => readKml(b, 10),
      '<?xml version="1.0"?><!DOCTYPE kml [<!ENTITY x SYSTEM "file:///etc/passwd">]><kml><Placemark><name>&x;</name></Placemark></kml>',
    ],
    [
      'an entity expansion (billion laughs)',
      (b) => readKml(b, 10),
      '<?xml version="1.0"?><!DOCTYPE kml [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;&a;">]><kml><name>&b;</name></kml>',
    ],
    ['GPX sent as KML', (b) => readKml(b, 10), '<gpx version="1.1"></gpx>'],
    ['KML sent as GPX', (b) => readGpx(b, 10), kml],
  ]
  for (const [name, read, body] of hostile)
    it(`refuses ${name}`, () => expect(refused(() => read(body))).toBe('invalid_request'))
})
