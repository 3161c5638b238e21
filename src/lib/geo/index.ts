export { readCsv, csvGeoDefaults, guessDelimiter, type CsvGeoOptions } from './read-csv.js'
export { readGeoJson } from './read-geojson.js'
export { readGpx, readKml } from './read-xml.js'
export type { GeoFeature, GeoFeatures } from './features.js'
