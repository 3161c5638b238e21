import { useEffect } from 'preact/hooks'
import { client } from '../api.js'
import { ProblemNote } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { navigate } from '../router.js'
import type { ScreenProps } from '../screen-props.js'

/** A saved view opens as its collection's grid with the view applied (`?view=<id>`). */
export function View(props: ScreenProps) {
  const id = props.params.id!
  const view = useAsync(
    () => client.transport.request<{ data: { collection: string } }>('GET', `/api/v1/views/${encodeURIComponent(id)}`),
    [id],
  )
  useEffect(() => {
    if (view.value)
      navigate(`/collections/${encodeURIComponent(view.value.data.collection)}?view=${encodeURIComponent(id)}`, {
        replace: true,
      })
  }, [view.value, id])
  return (
    <Page title="Saved view">
      {view.problem ? <ProblemNote problem={view.problem} /> : <p role="status">Opening the view…</p>}
    </Page>
  )
}
