import { client } from '../api.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { Link } from '../router.js'
import { useSession } from '../session.js'
import {
  Actor,
  useUserNames,
  Loaded,
  Time,
  type PagedList,
  type Schemas,
  TableWrap,
} from '../components/system-list.js'
import type { ScreenProps } from '../screen-props.js'
import './system.css'

/** How many of something there are: the list endpoint's total, or its length when it is not paged. */
async function count(path: string): Promise<{ n: number; active?: number }> {
  const reply = await client.transport.request<{ data: { status?: unknown }[]; total?: number }>('GET', path, {
    query: path.endsWith('/files') || path.endsWith('/users') ? { limit: 1 } : undefined,
  })
  if (typeof reply.total === 'number') return { n: reply.total }
  const active = reply.data.filter((item) => item.status === 'active').length
  return path.endsWith('/flows') ? { n: reply.data.length, active } : { n: reply.data.length }
}

const stats = [
  { label: 'Collections', path: '/api/v1/collections', to: '/collections', noun: 'collections' },
  { label: 'Users', path: '/api/v1/users', to: '/users', noun: 'users' },
  { label: 'Flows', path: '/api/v1/automate/flows', to: '/flows', noun: 'flows' },
  { label: 'Files', path: '/api/v1/files', to: '/files', noun: 'files' },
] as const

/** The overview: counts, recent activity, and the way into each section. What the role cannot read says so. */
export function Home(_props: ScreenProps) {
  const { session } = useSession()
  return (
    <Page title="Overview">
      <p>
        Signed in as <strong>{session.user.name || session.user.email}</strong> ({session.user.role}).
      </p>
      <ul class="system-stats" aria-label="Counts">
        {stats.map((s) => (
          <Stat key={s.path} {...s} />
        ))}
      </ul>
      <RecentActivity />
      <h2>Elsewhere</h2>
      <ul>
        <li>
          <Link to="/notifications">Your notifications</Link>
        </li>
        <li>
          <Link to="/settings">Project settings</Link> and <Link to="/storage">storage connections</Link>
        </li>
        <li>
          <Link to="/tools">Tool calls</Link> and the <Link to="/email">email log</Link>
        </li>
        <li>
          <Link to="/keys">API keys</Link> and <Link to="/roles">roles</Link>
        </li>
      </ul>
    </Page>
  )
}

function Stat(props: { label: string; path: string; to: string; noun: string }) {
  const value = useAsync(() => count(props.path), [props.path])
  return (
    <li class="system-stat">
      <h2>{props.label}</h2>
      <Loaded value={value.value} problem={value.problem} loading={value.loading}>
        {(c) => (
          <>
            <p class="system-count">{c.n}</p>
            {c.active === undefined ? null : <p class="system-muted">{c.active} active</p>}
          </>
        )}
      </Loaded>
      <p>
        <Link to={props.to}>Open {props.noun}</Link>
      </p>
    </li>
  )
}

function RecentActivity() {
  const names = useUserNames(useSession().admin)
  const recent = useAsync(
    () =>
      client.transport.request<PagedList<Schemas['AuditEntry']>>('GET', '/api/v1/audit-log', {
        query: { page: 1, limit: 8 },
      }),
    [],
  )
  return (
    <section aria-labelledby="recent-title">
      <h2 id="recent-title">Recent activity</h2>
      <Loaded value={recent.value} problem={recent.problem} loading={recent.loading}>
        {(result) =>
          result.data.length === 0 ? (
            <p class="empty">Nothing recorded yet.</p>
          ) : (
            <>
              <TableWrap label="Recent activity entries">
                <table class="data">
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Action</th>
                      <th scope="col">By</th>
                    </tr>
                  </thead>
                  <tbody>
                    {result.data.map((entry) => (
                      <tr key={entry.id}>
                        <td class="system-nowrap">
                          <Time value={entry.at} />
                        </td>
                        <td class="system-mono">{entry.action}</td>
                        <td>
                          <Actor {...entry.actor} names={names} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
              <p>
                <Link to="/audit">The whole audit log</Link>
              </p>
            </>
          )
        }
      </Loaded>
    </section>
  )
}
