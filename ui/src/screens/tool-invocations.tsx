import { useState } from 'preact/hooks'
import { client } from '../api.js'
import { Button, TextField } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { Loaded, Pager, Time, TableWrap } from '../components/system-list.js'
import type { ScreenProps } from '../screen-props.js'
import './system.css'

const limit = 25
const blank = { tool: '', key: '', since: '', until: '' }

/** A datetime-local value (the browser's zone) as ISO 8601, or undefined when empty. */
const iso = (local: string) => (local ? new Date(local).toISOString() : undefined)

/** The tool server's invocation log: every tool call, its key, tokens, duration and outcome. */
export function ToolInvocations(_props: ScreenProps) {
  const [page, setPage] = useState(1)
  const [draft, setDraft] = useState(blank)
  const [filters, setFilters] = useState(blank)
  const log = useAsync(
    () =>
      client.tools.log({
        page,
        limit,
        tool: filters.tool || undefined,
        key: filters.key || undefined,
        since: iso(filters.since),
        until: iso(filters.until),
      }),
    [page, filters],
  )
  // Keys by id, to name the key of each call (the revoked ones are no longer listed: their id is shown).
  const keys = useAsync(async () => {
    const listed = (await client.auth.apiKeys.list()) as unknown
    const all = (Array.isArray(listed) ? listed : ((listed as { data?: unknown[] }).data ?? [])) as {
      id: string
      label: string
    }[]
    return Object.fromEntries(all.map((k) => [k.id, k.label]))
  }, [])
  const set = (key: keyof typeof blank) => (value: string) => setDraft((d) => ({ ...d, [key]: value }))
  const filtered = Object.values(filters).some(Boolean)

  return (
    <Page title="Tool calls" actions={<Button onClick={() => void log.reload()}>Refresh</Button>}>
      <p class="system-muted">
        Calls to the project's tool server (MCP) by API keys. Arguments and results are never kept, only their estimated
        size.
      </p>
      <form
        class="system-filters"
        aria-label="Filter tool calls"
        onSubmit={(e) => {
          e.preventDefault()
          setPage(1)
          setFilters({ ...draft, tool: draft.tool.trim(), key: draft.key.trim() })
        }}
      >
        <TextField label="Tool" value={draft.tool} onValue={set('tool')} />
        <TextField label="API key id" value={draft.key} onValue={set('key')} />
        <TextField label="From" type="datetime-local" value={draft.since} onValue={set('since')} />
        <TextField label="Until" type="datetime-local" value={draft.until} onValue={set('until')} />
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
            <p class="empty">{filtered ? 'No calls match.' : 'No tool calls yet.'}</p>
          ) : (
            <>
              <TableWrap label="Tool calls">
                <table class="data">
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Tool</th>
                      <th scope="col">Outcome</th>
                      <th scope="col">Duration</th>
                      <th scope="col">Tokens in / out</th>
                      <th scope="col">API key</th>
                    </tr>
                  </thead>
                  <tbody>
                    {result.data.map((call) => (
                      <tr key={call.id}>
                        <td class="system-nowrap">
                          <Time value={call.createdAt} />
                        </td>
                        <td class="system-mono">{call.tool}</td>
                        <td class={call.outcome === 'ok' ? 'system-ok' : 'system-failed'}>{call.outcome}</td>
                        <td class="system-nowrap">{call.durationMs} ms</td>
                        <td class="system-nowrap">
                          {call.inputTokens} / {call.outputTokens}
                        </td>
                        <td>
                          {keys.value?.[call.keyId] ? (
                            <span title={call.keyId}>{keys.value[call.keyId]}</span>
                          ) : (
                            <span class="system-mono">{call.keyId}</span>
                          )}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
              <Pager {...result} onPage={setPage} label="Pages of tool calls" />
            </>
          )
        }
      </Loaded>
    </Page>
  )
}
