import { client } from '../../api.js'
import { Link } from '../../router.js'
import { useAsync } from '../use-async.js'

/** A saved view as GET /api/v1/views answers it (docs/views.md). */
export interface SavedView {
  id: string
  name: string
  collection: string
  filter: unknown
  sortBy: string | null
  fields: string[] | null
  search: string | null
}

/** The grid's address for a saved view: its filter, sort, search and columns as the grid's URL holds them. */
export function viewLink(view: SavedView, columnNames: readonly string[]): string {
  const query = new URLSearchParams({ view: view.id })
  if (view.filter !== null && view.filter !== undefined)
    query.set('filter', typeof view.filter === 'string' ? view.filter : JSON.stringify(view.filter))
  if (view.sortBy) query.set('sort', view.sortBy)
  if (view.search) query.set('q', view.search)
  if (view.fields) {
    const shown = new Set([...view.fields, 'id'])
    const hidden = columnNames.filter((c) => !shown.has(c))
    if (hidden.length > 0) query.set('hide', hidden.join(','))
  }
  return `/collections/${encodeURIComponent(view.collection)}?${query}`
}

/**
 * The collection's saved views as tabs over the grid (the shared ones and the reader's own): each opens the
 * grid with the view's filter, sort, search and columns. Nothing when there are none or the reader may not
 * list views.
 */
export function ViewTabs(props: { collection: string; columnNames: readonly string[]; active: string | null }) {
  const views = useAsync(
    () =>
      client.transport
        .request<{ data: SavedView[] }>('GET', '/api/v1/views', {
          query: { collection: props.collection, limit: 100 },
        })
        .then((r) => r.data)
        .catch((): SavedView[] => []),
    [props.collection],
  )
  if (!views.value || views.value.length === 0) return null
  return (
    <nav class="view-tabs" aria-label="Saved views">
      <ul>
        <li>
          <Link
            to={`/collections/${encodeURIComponent(props.collection)}`}
            aria-current={props.active === null ? 'page' : undefined}
          >
            All records
          </Link>
        </li>
        {views.value.map((view) => (
          <li key={view.id}>
            <Link to={viewLink(view, props.columnNames)} aria-current={props.active === view.id ? 'page' : undefined}>
              {view.name}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  )
}
