import { AppError } from '../../lib/errors.js'

/**
 * A reorder names every item of the project exactly once (decision 064): an item left out would keep a
 * place the caller never saw. Throws validation_error naming items[i].id, or `items` with the count missing.
 */
export function checkOrder(current: readonly { id: string }[], items: readonly { id: string }[]): void {
  const known = new Set(current.map((row) => row.id))
  const named = new Set<string>()
  for (const [i, item] of items.entries()) {
    const at = `items[${i}].id`
    if (!known.has(item.id)) throw new AppError('validation_error', `${at}: no such item in this project`, { at })
    if (named.has(item.id)) throw new AppError('validation_error', `${at}: the item is named twice`, { at })
    named.add(item.id)
  }
  const missing = current.length - named.size
  if (missing > 0)
    throw new AppError('validation_error', `items: every item must be placed (${missing} left out)`, {
      at: 'items',
      missing,
    })
}
