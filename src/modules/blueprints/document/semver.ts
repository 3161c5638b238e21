/** Semantic versions (semver.org 2.0.0): the envelope's `version`, and the order plan compares installs by. */

// The grammar of semver.org, split so that no part can backtrack over another: a version is at most 256
// characters before it is matched at all.
const core = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$/
const prereleasePart = /^(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)$/
const buildPart = /^[0-9A-Za-z-]+$/

export const maxVersionLength = 256

export interface SemVer {
  readonly major: number
  readonly minor: number
  readonly patch: number
  readonly prerelease: readonly string[]
}

/** The version, or null when the text is not semver. */
export function parseSemver(text: string): SemVer | null {
  if (text.length > maxVersionLength) return null
  const m = core.exec(text)
  if (!m) return null
  const prerelease = m[4] === undefined ? [] : m[4].split('.')
  if (!prerelease.every((p) => prereleasePart.test(p))) return null
  if (m[5] !== undefined && !m[5].split('.').every((p) => buildPart.test(p))) return null
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])]
  if (![major, minor, patch].every(Number.isSafeInteger)) return null
  return { major, minor, patch, prerelease }
}

/** Negative when a is older than b, positive when newer, 0 when they rank the same (build metadata is ignored). */
export function compareSemver(a: SemVer, b: SemVer): number {
  const byCore = a.major - b.major || a.minor - b.minor || a.patch - b.patch
  if (byCore !== 0) return Math.sign(byCore)
  // A pre-release ranks below its release; pre-releases compare part by part.
  if (a.prerelease.length === 0 && b.prerelease.length === 0) return 0
  if (a.prerelease.length === 0) return 1
  if (b.prerelease.length === 0) return -1
  for (let i = 0; i < Math.min(a.prerelease.length, b.prerelease.length); i++) {
    const x = a.prerelease[i]!
    const y = b.prerelease[i]!
    if (x === y) continue
    const xNum = /^\d+$/.test(x)
    const yNum = /^\d+$/.test(y)
    if (xNum && yNum) return Math.sign(Number(x) - Number(y))
    if (xNum !== yNum) return xNum ? -1 : 1
    return x < y ? -1 : 1
  }
  return Math.sign(a.prerelease.length - b.prerelease.length)
}
