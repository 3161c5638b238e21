// The grid's realtime feed: the collection's stream (with the view's filter when the stream takes it)
// applied to the rows in place.
import type { SubscriptionEvent, SubscriptionState } from '@plinth/client'
import { useEffect, useState } from 'preact/hooks'
import { client } from '../../api.js'
import type { Row } from './fields.js'
import type { RowSource } from './row-source.js'

export function useLive(
  collection: string,
  source: { readonly current: RowSource | null },
  view: { filter?: string | undefined; search?: string | undefined; sortBy: string; relationFields: readonly string[] },
  reload: () => void,
  /** False until the list answered: a filter the list refuses is not sent to the stream. */
  enabled: boolean,
): SubscriptionState {
  const [state, setState] = useState<SubscriptionState>('connecting')
  const key = `${collection}\n${view.filter ?? ''}\n${view.search ?? ''}\n${view.sortBy}\n${enabled}`
  useEffect(() => {
    if (!enabled) {
      setState('connecting')
      return
    }
    let closed = false
    let subscription: ReturnType<typeof client.subscribe> | null = null
    // New records are placed where the sort puts them when it is by creation; otherwise at the top.
    const where = view.sortBy === 'created_at' ? 'end' : 'top'
    let placeCreates = !view.search
    const handle = (event: SubscriptionEvent) => {
      const rows = source.current
      if (!rows) return
      if (event.type === 'gap') return reload()
      const record = event.record as unknown as Row
      if (event.type === 'record.delete') rows.applyDelete(record.id, event.at)
      else if (!rows.applyUpdate(record, view.relationFields) && placeCreates) rows.applyCreate(record, where)
    }
    const open = (filter: string | undefined) => {
      subscription = client.subscribe(collection, filter, handle, {
        onState: (next) => {
          if (!closed) setState(next)
        },
      })
      // A filter the stream does not take (a path through a relation): the whole stream, creates unplaced.
      subscription.ready.catch(() => {
        if (closed || filter === undefined) return
        placeCreates = false
        open(undefined)
      })
    }
    open(view.filter)
    return () => {
      closed = true
      void subscription?.close()
    }
  }, [key])
  return state
}
