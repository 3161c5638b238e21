import { useEffect } from 'preact/hooks'
import { client } from '../api.js'
import { ProblemNote } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { navigate } from '../router.js'
import { viewLink, type SavedView } from '../components/grid/view-tabs.js'
import type { ScreenProps } from '../screen-props.js'

/** A saved view opens as its collection's grid with the view applied (`?view=<id>`). */
export function View(props: ScreenProps) {
  const id = props.params.id!
  const view = useAsync(async () => {
    const saved = (
      await client.transport.request<{ data: SavedView }>('GET', `/api/v1/views/${encodeURIComponent(id)}`)
    ).data
    const collection = await client.transport.request<{ data: { fields: { name: string }[] } }>(
      'GET',
      `/api/v1/collections/${encodeURIComponent(saved.collection)}`,
    )
    return viewLink(saved, [...collection.data.fields.map((f) => f.name), 'id', 'created_at', 'updated_at', '_version'])
  }, [id])
  useEffect(() => {
    if (view.value) navigate(view.value, { replace: true })
  }, [view.value])
  return (
    <Page title="Saved view">
      {view.problem ? <ProblemNote problem={view.problem} /> : <p role="status">Opening the view…</p>}
    </Page>
  )
}
