import { AppError, isAppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import type { RecordsService } from '../records/index.js'
import type { ViewDefinition } from './schemas.js'

type Lister = Pick<RecordsService, 'list'>

/**
 * The save-time check (STYLE 13): each part of the view runs once through the records list, as the saver,
 * one keyset row (never counted), so the records machinery judges it exactly as it will when the view is
 * read. A refusal is validation_error (422) naming the part: `filter.<where>`, `sortBy`, `fields[i]`,
 * `search`, `collection`. A part the saver may not read stays forbidden (403), as on the list itself.
 */
export async function checkView(
  records: Lister,
  actor: Principal,
  collection: string,
  definition: ViewDefinition,
): Promise<void> {
  const probe = async (at: string, query: Parameters<Lister['list']>[2]) => {
    try {
      await records.list(actor, collection, query)
    } catch (err) {
      if (!isAppError(err)) throw err
      if (err.code === 'collection_not_found')
        throw new AppError('validation_error', `collection: no collection named "${collection}"`, { at: 'collection' })
      if (err.code !== 'invalid_request' && err.code !== 'invalid_field') throw err
      if (at === 'filter') {
        const path = typeof err.details?.path === 'string' ? err.details.path : 'filter'
        const message = err.message.startsWith(path) ? err.message : `${path}: ${err.message}`
        throw new AppError('validation_error', message, { ...err.details, at: path })
      }
      // The list names the parameter it read (or, through the field resolver, "filter"); the view names its own part.
      const reason = err.message.replace(/^(filter|sortBy|fields|search)\b[^:]*: /, '')
      throw new AppError('validation_error', `${at}: ${reason}`, { ...err.details, at })
    }
  }
  const one = { page: 1, limit: 1, cursor: '' }
  await probe('collection', one)
  if (definition.filter !== null) await probe('filter', { ...one, filter: JSON.stringify(definition.filter) })
  if (definition.sortBy !== null) await probe('sortBy', { ...one, sortBy: definition.sortBy })
  if (definition.search !== null) await probe('search', { ...one, search: definition.search })
  for (const [index, field] of (definition.fields ?? []).entries()) {
    if (field.includes(','))
      throw new AppError('validation_error', `fields[${index}]: a field name has no comma`, { at: `fields[${index}]` })
    await probe(`fields[${index}]`, { ...one, fields: field })
  }
}
