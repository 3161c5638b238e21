/**
 * What every geospatial reader makes of a body: its features, in order, each with where it stands in the
 * body, its geometry (null when it has none) and its properties; a feature the reader could not make
 * sense of carries `problem` instead. Geometries are not checked here: whoever stores them does.
 */
export interface GeoFeature {
  /** 1-based: the CSV line the record ends on, or the feature's number (GeoJSON, KML, GPX). */
  line: number
  /** 0-based position among the features (GeoJSON, KML, GPX); absent for CSV. */
  feature?: number
  geometry: unknown
  properties: Record<string, unknown>
  /** Why this feature could not be read (then geometry is null and properties empty); `geometry` when it is its geometry. */
  problem?: FeatureProblem
}

export interface FeatureProblem {
  message: string
  /** The geometry could not be read (rather than the feature itself). */
  geometry: boolean
}

export interface GeoFeatures {
  features: GeoFeature[]
  /** More features followed the first `limit`; they were not read. */
  truncated: boolean
  /** The properties are text as the file held it (CSV, KML, GPX): a reader of typed values may convert them. */
  textValues: boolean
}

/** Features numbered by position: `line` 1-based, `feature` 0-based. */
export function numbered(
  index: number,
  geometry: unknown,
  properties: Record<string, unknown>,
  problem?: FeatureProblem,
): GeoFeature {
  return {
    line: index + 1,
    feature: index,
    geometry: problem ? null : geometry,
    properties: problem ? {} : properties,
    ...(problem ? { problem } : {}),
  }
}

/** The first `limit` items and whether more followed. */
export function capped<T>(items: readonly T[], limit: number): { items: readonly T[]; truncated: boolean } {
  return items.length > limit ? { items: items.slice(0, limit), truncated: true } : { items, truncated: false }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
