import { useState } from 'preact/hooks'
import { client } from '../api.js'
import { Button, Field, TextField } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { Link } from '../router.js'
import { Loaded, Pager, Time, type PagedList, type Schemas, TableWrap } from '../components/system-list.js'
import type { ScreenProps } from '../screen-props.js'
import './system.css'

type Entry = Schemas['EmailLogEntry']

const limit = 25
const blank = { status: '', recipient: '' }

/** The email delivery log: one row per recipient of each message flows sent (never a subject or body). */
export function EmailLog(_props: ScreenProps) {
  const [page, setPage] = useState(1)
  const [draft, setDraft] = useState(blank)
  const [filters, setFilters] = useState(blank)
  const log = useAsync(
    () =>
      client.transport.request<PagedList<Entry>>('GET', '/api/v1/automate/email-log', {
        query: { page, limit, status: filters.status || undefined, recipient: filters.recipient || undefined },
      }),
    [page, filters],
  )
  const filtered = Boolean(filters.status || filters.recipient)

  return (
    <Page title="Email" actions={<Button onClick={() => void log.reload()}>Refresh</Button>}>
      <p class="system-muted">
        Messages sent by flows, one row per recipient. Subjects and bodies are not kept: a run's steps show them.
      </p>
      <form
        class="system-filters"
        aria-label="Filter the email log"
        onSubmit={(e) => {
          e.preventDefault()
          setPage(1)
          setFilters({ status: draft.status, recipient: draft.recipient.trim() })
        }}
      >
        <Field label="Status">
          {(id) => (
            <select
              id={id}
              value={draft.status}
              onChange={(e) => setDraft((d) => ({ ...d, status: e.currentTarget.value }))}
            >
              <option value="">Any</option>
              <option value="sent">Sent</option>
              <option value="delivered">Delivered</option>
            </select>
          )}
        </Field>
        <TextField
          label="Recipient"
          type="email"
          value={draft.recipient}
          onValue={(recipient) => setDraft((d) => ({ ...d, recipient }))}
        />
        <Button type="submit">Filter</Button>
        {filtered ? (
          <Button
            onClick={() => {
              setDraft(blank)
              setFilters(blank)
              setPage(1)
            }}
          >
            Show all
          </Button>
        ) : null}
      </form>
      <Loaded value={log.value} problem={log.problem} loading={log.loading}>
        {(result) =>
          result.data.length === 0 ? (
            <p class="empty">{filtered ? 'No messages match.' : 'No email sent yet.'}</p>
          ) : (
            <>
              <TableWrap label="Messages">
                <table class="data">
                  <thead>
                    <tr>
                      <th scope="col">Sent</th>
                      <th scope="col">Recipient</th>
                      <th scope="col">Status</th>
                      <th scope="col">Delivered</th>
                      <th scope="col">Channel</th>
                      <th scope="col">Flow run</th>
                      <th scope="col">Message id</th>
                    </tr>
                  </thead>
                  <tbody>
                    {result.data.map((m) => (
                      <tr key={m.id}>
                        <td class="system-nowrap">
                          <Time value={m.createdAt} unit="ms" />
                        </td>
                        <td>{m.recipient}</td>
                        <td>
                          <span class="badge">{m.status}</span>
                        </td>
                        <td class="system-nowrap">
                          <Time value={m.deliveredAt} unit="ms" />
                        </td>
                        <td>{m.channel}</td>
                        <td>
                          {m.flowId ? (
                            <Link to={`/flows/${encodeURIComponent(m.flowId)}/runs`}>
                              {m.stepKey ? `step ${m.stepKey}` : 'runs'}
                            </Link>
                          ) : (
                            '—'
                          )}
                        </td>
                        <td class="system-mono">{m.messageId}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
              <Pager {...result} onPage={setPage} label="Pages of the email log" />
            </>
          )
        }
      </Loaded>
    </Page>
  )
}
