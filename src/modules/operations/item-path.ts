import { lookupPath, parseTemplate, type PathPart } from '../../lib/template/index.js'

/**
 * A path inside a value (`customer.name`, `items[0].sku`, `tags.0`, `["first name"]`), written as a
 * template path without its root: the same syntax and the same safe reading (own data properties only,
 * never a prototype or a getter) as `{{ }}` tags. Used by transform, json_parse and the sort, group and
 * pick options.
 */
export type ItemPath = PathPart

const root = '$value'

/** Parses a path; answers the problem as text when it is not one. The empty path is the value itself. */
export function parseItemPath(path: string): ItemPath | string {
  if (path.length > 500) return 'a path is at most 500 characters'
  const text = path === '' ? root : path.startsWith('[') ? `${root}${path}` : `${root}.${path}`
  const parsed = parseTemplate(`{{${text}}}`)
  if (!parsed.ok) return `${JSON.stringify(path)} is not a path: ${parsed.error.message}`
  const tag = parsed.template.whole
  if (!tag || tag.kind !== 'path' || tag.root !== root)
    return `${JSON.stringify(path)} is not a path such as customer.name or items[0].sku`
  return tag
}

/** The value at the path, or undefined when something on the way is missing. */
export function readItemPath(value: unknown, path: ItemPath): unknown {
  const found = lookupPath({ [root]: value }, path)
  return found.ok ? found.value : undefined
}
