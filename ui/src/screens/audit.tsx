import { useState } from 'preact/hooks'
import { client } from '../api.js'
import { Button, TextField } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import {
  Actor,
  useUserNames,
  Json,
  Loaded,
  Pager,
  Time,
  type PagedList,
  type Schemas,
  TableWrap,
} from '../components/system-list.js'
import type { ScreenProps } from '../screen-props.js'
import './system.css'

type Entry = Schemas['AuditEntry']

const limit = 25

/** Who did what: the project's audit log, newest first, filtered by action (the filter the API offers). */
export function Audit(_props: ScreenProps) {
  const [page, setPage] = useState(1)
  const names = useUserNames()
  const [actionInput, setActionInput] = useState('')
  const [action, setAction] = useState('')
  const log = useAsync(
    () =>
      client.transport.request<PagedList<Entry>>('GET', '/api/v1/audit-log', {
        query: { page, limit, action: action || undefined },
      }),
    [page, action],
  )

  return (
    <Page title="Audit log" actions={<Button onClick={() => void log.reload()}>Refresh</Button>}>
      <form
        class="system-filters"
        aria-label="Filter the audit log"
        onSubmit={(e) => {
          e.preventDefault()
          setPage(1)
          setAction(actionInput.trim())
        }}
      >
        <TextField
          label="Action"
          hint="Exact, e.g. settings.updated"
          value={actionInput}
          onValue={setActionInput}
          maxLength={64}
        />
        <Button type="submit">Filter</Button>
        {action ? (
          <Button
            onClick={() => {
              setActionInput('')
              setAction('')
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
            <p class="empty">{action ? `No entries for ${action}.` : 'No entries yet.'}</p>
          ) : (
            <>
              <TableWrap label="Audit entries">
                <table class="data">
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Action</th>
                      <th scope="col">Actor</th>
                      <th scope="col">Target</th>
                      <th scope="col">IP</th>
                      <th scope="col">Details</th>
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
                        <td>{entry.target ? <Actor {...entry.target} names={names} /> : '—'}</td>
                        <td class="system-mono">{entry.ip ?? '—'}</td>
                        <td>
                          {Object.keys(entry.details).length === 0 ? (
                            '—'
                          ) : (
                            <details>
                              <summary>Show</summary>
                              <Json value={entry.details} />
                            </details>
                          )}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
              <Pager {...result} onPage={setPage} label="Pages of the audit log" />
            </>
          )
        }
      </Loaded>
    </Page>
  )
}
