import { isPlainObject } from './json-value.js'

/**
 * GeoJSON geometry checks (RFC 7946): the seven geometry types, positions of 2 or 3 finite numbers with
 * longitude in -180..180 and latitude in -90..90, lines of 2+ positions, polygon rings of 4+ positions that
 * close. GeometryCollections may not nest (RFC 7946 §3.1.8 advises against it) and a geometry holds at most
 * `geoLimits.positions` positions.
 */
export const geoLimits = { positions: 100_000 } as const

export const geometryTypes = [
  'Point',
  'MultiPoint',
  'LineString',
  'MultiLineString',
  'Polygon',
  'MultiPolygon',
  'GeometryCollection',
] as const

interface Budget {
  positions: number
}

type Check = (value: unknown, at: string, budget: Budget) => string | null

/** Why a value is not a GeoJSON geometry, or null when it is one. */
export function geometryProblem(value: unknown): string | null {
  return checkGeometry(value, 'geometry', { positions: 0 }, true)
}

function checkGeometry(value: unknown, at: string, budget: Budget, topLevel: boolean): string | null {
  if (!isPlainObject(value)) return `${at} is not an object`
  const coordinates = value.coordinates
  switch (value.type) {
    case 'Point':
      return checkPosition(coordinates, 'coordinates', budget)
    case 'MultiPoint':
      return checkList(coordinates, 'coordinates', 0, checkPosition, budget)
    case 'LineString':
      return checkLine(coordinates, 'coordinates', budget)
    case 'MultiLineString':
      return checkList(coordinates, 'coordinates', 0, checkLine, budget)
    case 'Polygon':
      return checkPolygon(coordinates, 'coordinates', budget)
    case 'MultiPolygon':
      return checkList(coordinates, 'coordinates', 0, checkPolygon, budget)
    case 'GeometryCollection':
      if (!topLevel) return `${at} is a GeometryCollection inside a GeometryCollection`
      return checkList(value.geometries, 'geometries', 0, (g, gAt, b) => checkGeometry(g, gAt, b, false), budget)
    default:
      return `type is not one of ${geometryTypes.join(', ')}`
  }
}

function checkList(value: unknown, at: string, min: number, each: Check, budget: Budget): string | null {
  if (!Array.isArray(value)) return `${at} is not an array`
  if (value.length < min) return `${at} needs at least ${min} entries`
  for (let i = 0; i < value.length; i++) {
    const problem = each(value[i] as unknown, `${at}[${i}]`, budget)
    if (problem) return problem
  }
  return null
}

const checkPosition: Check = (value, at, budget) => {
  budget.positions += 1
  if (budget.positions > geoLimits.positions) return `more than ${geoLimits.positions} positions`
  if (!Array.isArray(value) || value.length < 2 || value.length > 3)
    return `${at} is not a position [longitude, latitude(, altitude)]`
  if (!value.every((n) => typeof n === 'number' && Number.isFinite(n)))
    return `${at} holds something other than finite numbers`
  const [lon, lat] = value as number[]
  if (lon! < -180 || lon! > 180) return `${at} has a longitude outside -180..180`
  if (lat! < -90 || lat! > 90) return `${at} has a latitude outside -90..90`
  return null
}

const checkLine: Check = (value, at, budget) => checkList(value, at, 2, checkPosition, budget)

const checkRing: Check = (value, at, budget) => {
  const problem = checkList(value, at, 4, checkPosition, budget)
  if (problem) return problem
  const ring = value as number[][]
  const first = ring[0]!
  const last = ring[ring.length - 1]!
  const closed = first.length === last.length && first.every((n, i) => n === last[i])
  return closed ? null : `${at} is not closed (its first and last positions differ)`
}

const checkPolygon: Check = (value, at, budget) => checkList(value, at, 1, checkRing, budget)
