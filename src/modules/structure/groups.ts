import { structures } from '../collections/index.js'
import { shownPath, type FieldStructure } from './field-structure.js'

/** One kind of problem at one place, over the records that have it (core-api "Structure check and repair job"). */
export interface Group {
  readonly code: structures.IssueCode
  /** Collapsed: list indices are [], map values {}. */
  readonly path: string
  readonly detail: string
  /** Records with this problem; one record counts once however often it has it. */
  count: number
  /** The allowed value or declared key the wrong one most likely meant, or null. */
  readonly suggestion: string | null
  readonly sampleIds: string[]
  /** The wrong value or key, present when the group is repairable (it has a suggestion too). */
  readonly from?: string
}

/** A group with the key that identifies it, as jobs store them. */
export interface KeyedGroup extends Group {
  readonly key: string
}

export const groupLimits = { groups: 100, sampleIds: 5 } as const

/**
 * Collects the issues of records into groups: by code, path and wrong value (or, for type issues, what
 * the value was). Past `groupLimits.groups` distinct groups, further wrong values at a path fold into one
 * group of "other values" there, so a report stays small whatever the data.
 */
export class GroupSet {
  private readonly groups = new Map<string, KeyedGroup>()

  constructor(
    private readonly fs: FieldStructure,
    initial: readonly KeyedGroup[] = [],
  ) {
    for (const group of initial) this.groups.set(group.key, { ...group, sampleIds: [...group.sampleIds] })
  }

  /** Adds one record's issues; returns whether it had any. */
  add(recordId: string, issues: readonly structures.StructureIssue[]): boolean {
    const seen = new Set<string>()
    for (const issue of issues) {
      const group = this.groupOf(issue)
      if (seen.has(group.key)) continue
      seen.add(group.key)
      group.count++
      if (group.sampleIds.length < groupLimits.sampleIds) group.sampleIds.push(recordId)
    }
    return issues.length > 0
  }

  /** The groups, most records first. */
  list(): KeyedGroup[] {
    return [...this.groups.values()].sort(
      (a, b) => b.count - a.count || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) || (a.key < b.key ? -1 : 1),
    )
  }

  get size(): number {
    return this.groups.size
  }

  private groupOf(issue: structures.StructureIssue): KeyedGroup {
    const path = shownPath(this.fs, structures.renderPath(issue.path, true))
    const value = issue.value ?? ''
    // No allowed value or key is longer than 200 characters, so a longer one groups by its start (kept small).
    const distinct =
      issue.code === 'type' ? (issue.got ?? '') : value.length > 200 ? `${value.slice(0, 200)}…${value.length}` : value
    const key = JSON.stringify([issue.code, path, distinct])
    let group = this.groups.get(key)
    if (group) return group
    if (this.groups.size >= groupLimits.groups) {
      const overflow = JSON.stringify([issue.code, path, null])
      group = this.groups.get(overflow)
      if (!group) {
        group = {
          key: overflow,
          code: issue.code,
          path,
          detail: overflowDetail(issue.code),
          count: 0,
          suggestion: null,
          sampleIds: [],
        }
        this.groups.set(overflow, group)
      }
      return group
    }
    const suggestion = suggestionFor(issue)
    group = {
      key,
      code: issue.code,
      path,
      detail: structures.describeIssue(issue),
      count: 0,
      suggestion,
      sampleIds: [],
      ...(suggestion !== null && issue.value !== undefined ? { from: issue.value } : {}),
    }
    this.groups.set(key, group)
    return group
  }
}

function overflowDetail(code: structures.IssueCode): string {
  const what = code === 'type' ? 'values of other types' : code === 'enum' ? 'other values' : 'other keys'
  return `${what} (a report lists ${groupLimits.groups} groups at most; repair these and scan again)`
}

/** The near miss of a wrong enum value, unknown key or map key; type issues have none. */
export function suggestionFor(issue: structures.StructureIssue): string | null {
  if (issue.value === undefined) return null
  if ((issue.code === 'enum' || issue.code === 'key') && issue.shape.type === 'enum') {
    return structures.suggest(
      issue.value,
      issue.shape.values.map((v) => v.value),
    )
  }
  if (issue.code === 'unknown-key' && issue.shape.type === 'object')
    return structures.suggest(issue.value, Object.keys(issue.shape.entries))
  return null
}

/** A group as the API shows it (its key stays inside). */
export function presentGroup(group: KeyedGroup): Group {
  const { key: _key, ...shown } = group
  return shown
}
