import { AppError } from '../../../lib/errors.js'
import type { FieldDef } from '../field-types/index.js'
import type { ChangeRequest, FieldChange } from './define-change.js'
import { changeKinds } from './registry.js'

/** What a PATCH (the complete, normalised field list) changes: added fields and the changes to existing ones. */
export interface ChangePlan {
  /** New fields, in the order of the new list. */
  readonly added: FieldDef[]
  /** Existing fields whose `indexed` flips, as they are in the new list. */
  readonly indexToggled: FieldDef[]
  /** Each change of an existing field, by kind (see registry.ts); order of the fields does not matter. */
  readonly changes: FieldChange[]
  /** Fields renamed (`renames`): as they were, and as the new list holds them. */
  readonly renamed: { readonly from: FieldDef; readonly to: FieldDef }[]
  /** Fields dropped (`drop`), as they were. */
  readonly dropped: FieldDef[]
}

/**
 * Plans a PATCH: each changed property of an existing field must belong to a kind of change (registry.ts),
 * whose request check then runs. Throws AppError invalid_field (400) naming the first existing field
 * that is missing (removed or renamed) or changed in a way no kind makes, and invalid_request (400) for
 * `enumChanges` that name no such change or map values wrongly.
 */
export function planChanges(
  existing: readonly FieldDef[],
  next: readonly FieldDef[],
  request: ChangeRequest = { enumChanges: {} },
): ChangePlan {
  const nextByName = new Map(next.map((f, index) => [f.name, { def: f, index }]))
  const renames = request.renames ?? {}
  const drop = new Set(request.drop ?? [])
  checkRenamesAndDrops(existing, nextByName, renames, drop)
  const changes: FieldChange[] = []
  const renamed: ChangePlan['renamed'] = []
  const dropped: FieldDef[] = []
  existing.forEach((old, index) => {
    if (drop.has(old.name)) {
      dropped.push(old)
      return
    }
    const newName = renames[old.name]
    const found = nextByName.get(newName ?? old.name)
    if (!found) {
      throw new AppError(
        'invalid_field',
        `Field "${old.name}" is missing from fields: to remove it and its data, name it in "drop"; to rename it, map it in "renames" (e.g. { "${old.name}": "new_name" }); nothing was changed`,
        { field: old.name, index },
      )
    }
    if (newName !== undefined) renamed.push({ from: old, to: found.def })
    // A renamed field's other properties change through the kinds below, as any field's do.
    const changed = changedProperties({ ...old, name: found.def.name }, found.def)
    const covered = new Set(changeKinds.flatMap((k) => k.properties as string[]))
    const unsupported = changed.filter((p) => !covered.has(p))
    if (unsupported.length > 0) {
      throw new AppError(
        'invalid_field',
        `Field "${old.name}": changing ${unsupported.join(', ')} of an existing field is not supported (see "Changing a collection" in the docs)`,
        { field: old.name, index: found.index, changed: unsupported },
      )
    }
    for (const kind of changeKinds) {
      if (kind.properties.some((p) => changed.includes(p)))
        changes.push({ kind: kind.kind, field: found.def.name, before: old, after: found.def })
    }
  })
  for (const field of Object.keys(request.enumChanges)) {
    if (!changes.some((c) => c.kind === 'enumValues' && c.field === field))
      throw new AppError(
        'invalid_request',
        `enumChanges names "${field.slice(0, 60)}", which is not an existing enum or multi_enum field whose enumValues change`,
        { field: field.slice(0, 60) },
      )
  }
  for (const change of changes) changeKinds.find((k) => k.kind === change.kind)?.validate?.(change, request)
  const kept = new Set(existing.filter((f) => !drop.has(f.name)).map((f) => renames[f.name] ?? f.name))
  return {
    added: next.filter((f) => !kept.has(f.name)),
    indexToggled: changes.filter((c) => c.kind === 'indexed').map((c) => c.after),
    changes,
    renamed,
    dropped,
  }
}

/**
 * `renames` maps existing fields to names no existing field has (a swap takes two PATCHes), and `drop` names
 * existing fields the list leaves out: a field both renamed and dropped, or dropped yet still listed, is
 * a contradiction the client should see rather than have resolved for it. Throws invalid_request (400).
 */
function checkRenamesAndDrops(
  existing: readonly FieldDef[],
  next: ReadonlyMap<string, unknown>,
  renames: Readonly<Record<string, string>>,
  drop: ReadonlySet<string>,
): void {
  const names = new Set(existing.map((f) => f.name))
  const refuse = (message: string, field: string) => {
    throw new AppError('invalid_request', message, { field: field.slice(0, 60) })
  }
  const targets = new Set<string>()
  for (const [from, to] of Object.entries(renames)) {
    if (!names.has(from)) refuse(`renames names "${from.slice(0, 60)}", which is not a field of the collection`, from)
    if (drop.has(from)) refuse(`"${from}" is both renamed and dropped`, from)
    if (to === from) refuse(`renames maps "${from}" to itself`, from)
    if (names.has(to)) refuse(`renames maps "${from}" to "${to}", which is already a field; rename one at a time`, from)
    if (targets.has(to)) refuse(`renames gives two fields the name "${to.slice(0, 60)}"`, to)
    if (next.has(from)) refuse(`"${from}" is renamed to "${to}" but fields still lists "${from}"`, from)
    targets.add(to)
  }
  for (const name of drop) {
    if (!names.has(name)) refuse(`drop names "${name.slice(0, 60)}", which is not a field of the collection`, name)
    if (next.has(name) && !targets.has(name)) refuse(`"${name}" is dropped but fields still lists it`, name)
  }
}

// Compared in canonical form: absent, undefined and (for flags) false are the same.
function changedProperties(a: FieldDef, b: FieldDef): string[] {
  const left = canonicalDef(a)
  const right = canonicalDef(b)
  const keys = new Set([...Object.keys(left), ...Object.keys(right)])
  return [...keys].filter((key) => stableJson(left[key]) !== stableJson(right[key])).sort()
}

function canonicalDef(def: FieldDef): Record<string, unknown> {
  return {
    ...def,
    required: def.required === true,
    unique: def.unique === true,
    indexed: def.indexed === true,
    translatable: def.translatable === true,
  }
}

function stableJson(value: unknown): string {
  if (value === undefined) return 'undefined'
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value)
}
