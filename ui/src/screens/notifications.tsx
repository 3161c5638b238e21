import { useEffect, useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { Button, ProblemNote } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { Loaded, Pager, Time, type PagedList, type Schemas } from '../components/system-list.js'
import type { ScreenProps } from '../screen-props.js'
import './system.css'

type Notification = Schemas['Notification']

const limit = 25
const base = '/api/v1/notifications'

/** A link a sender gave, when it is one a browser may follow safely (a path, http, https, mailto). */
function safeLink(link: string | null): string | null {
  if (!link) return null
  if (link.startsWith('/') && !link.startsWith('//')) return link
  try {
    return ['http:', 'https:', 'mailto:'].includes(new URL(link).protocol) ? link : null
  } catch {
    return null
  }
}

/** The signed-in person's inbox: unread first, mark read (one or all), remove. */
export function Notifications(_props: ScreenProps) {
  const [page, setPage] = useState(1)
  const [unreadOnly, setUnreadOnly] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)
  const inbox = useAsync(
    () =>
      client.transport.request<PagedList<Notification> & { unread: number }>('GET', base, {
        query: { page, limit, unread: unreadOnly ? 'true' : undefined },
      }),
    [page, unreadOnly],
  )

  // Live: a notification put in this inbox while the page is open appears at once (the user's SSE channel,
  // authenticated by the session cookie). Missed ones are in the list anyway.
  const reload = inbox.reload
  useEffect(() => {
    if (typeof EventSource === 'undefined') return
    const stream = new EventSource(`${base}/stream`)
    stream.addEventListener('notification.create', () => void reload())
    return () => stream.close()
  }, [reload])

  async function act(method: string, path: string) {
    setProblem(null)
    try {
      await client.transport.request(method, path)
      await inbox.reload()
    } catch (err) {
      setProblem(problemOf(err))
    }
  }

  return (
    <Page
      title="Notifications"
      actions={
        <>
          <Button onClick={() => void inbox.reload()}>Refresh</Button>
          <Button
            variant="primary"
            disabled={!inbox.value || inbox.value.unread === 0}
            onClick={() => void act('POST', `${base}/read-all`)}
          >
            Mark all read
          </Button>
        </>
      }
    >
      <div class="inline system-status notifications-bar">
        <label class="inline">
          <input
            type="checkbox"
            checked={unreadOnly}
            onChange={(e) => {
              setPage(1)
              setUnreadOnly(e.currentTarget.checked)
            }}
          />
          Unread only
        </label>
        {inbox.value ? <span role="status">{inbox.value.unread} unread</span> : null}
      </div>
      <ProblemNote problem={problem} />
      <Loaded value={inbox.value} problem={inbox.problem} loading={inbox.loading}>
        {(result) =>
          result.data.length === 0 ? (
            <p class="empty">{unreadOnly ? 'Nothing unread.' : 'No notifications.'}</p>
          ) : (
            <>
              <ul class="notifications-list">
                {result.data.map((n) => {
                  const href = safeLink(n.link)
                  return (
                    <li key={n.id} class={n.read ? undefined : 'notifications-unread'}>
                      <h2>
                        {n.read ? null : <span class="system-visually-hidden">Unread: </span>}
                        {n.title}
                      </h2>
                      <p class="system-muted">
                        <span class="badge">{n.type}</span> <Time value={n.createdAt} />
                      </p>
                      <p>{n.message}</p>
                      {href ? (
                        <p>
                          <a href={href} rel="noopener noreferrer">
                            Open {n.link}
                          </a>
                        </p>
                      ) : null}
                      <div class="system-actions">
                        {n.read ? null : (
                          <Button
                            onClick={() => void act('POST', `${base}/${encodeURIComponent(n.id)}/read`)}
                            aria-label={`Mark read: ${n.title}`}
                          >
                            Mark read
                          </Button>
                        )}
                        <Button
                          variant="danger"
                          onClick={() => void act('DELETE', `${base}/${encodeURIComponent(n.id)}`)}
                          aria-label={`Remove: ${n.title}`}
                        >
                          Remove
                        </Button>
                      </div>
                    </li>
                  )
                })}
              </ul>
              <Pager {...result} onPage={setPage} label="Pages of notifications" />
            </>
          )
        }
      </Loaded>
    </Page>
  )
}
