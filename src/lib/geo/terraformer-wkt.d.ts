// @terraformer/wkt 2.2.2 ships no types; this is the one function Plinth calls.
declare module '@terraformer/wkt' {
  /** A WKT text as a GeoJSON geometry; throws on text that is not WKT. */
  export function wktToGeoJSON(wkt: string): { type: string; coordinates?: unknown; geometries?: unknown }
}
